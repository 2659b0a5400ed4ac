// The long tail of real logs: any OOM wording, driver and library messages, rank prefixes of
// launchers and workers, and the progress formats of frameworks and hand-written loops.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/report/log_verdicts.h"
#include "parsers/log/log_analyzer.h"
#include "parsers/log/rank_prefix.h"
#include "parsers/log/task_label.h"

using namespace oomdx;

namespace {

log_analysis run(const std::string& text) { return analyze_log_text(text, "t.log"); }

constexpr std::int64_t MiB = 1LL << 20;

}  // namespace

TEST_CASE("any out-of-memory wording is an OOM, never 'no OOM'") {
    SUBCASE("wording no named family knows: unknown_oom with its evidence") {
        auto a = run("epoch 3\nGPUassert: out of memory mean.cu 377\n");
        CHECK(a.source == "unknown_oom");
        CHECK(a.signature == "generic_out_of_memory");
        CHECK(a.line == 2);
        CHECK(render_text(a, false, false).find("No OOM") == std::string::npos);
    }
    SUBCASE("a named family wins over the wording seen earlier") {
        auto a = run("Out of memory while trying to allocate 12 bytes\n"
                     "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity; "
                     "5.00 GiB already allocated; 1.00 GiB free; 6.00 GiB reserved in total by PyTorch)\n");
        CHECK(a.source == "caching_allocator");
        CHECK(a.line == 2);
    }
    SUBCASE("a host kill in words under a bare title: the named fallback is the failure (cases68)") {
        const std::string title = "Out of memory\nCan't train with train_multi.py, even with batch size 1.\n";
        const auto killed = run(title + "The process gets killed by out-of-memory handler.\n");
        CHECK((killed.source == "host_oom" && killed.line == 3));
        const auto bare = run(title);  // the title alone stays the generic wording
        CHECK((bare.source == "unknown_oom" && bare.line == 1));
    }
    SUBCASE("advice that mentions running out of memory is not a failure") {
        auto a = run("Tip: set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid out of memory errors\nstep 3, loss 1.2\n");
        CHECK(a.source == "none");
    }
    SUBCASE("a named look-alike on the same line wins over the wording") {
        auto a = run("Get a block from the existing pool failed (out of memory). This error log can be ignored.\n");
        CHECK(a.source == "none");
    }
}

// The wraps of alpaca-rlhf#3 and DeepSpeed#3312 (tests/fixtures/logs/heldout/b21, d01): the
// capacity figure ends one line, its unit starts the next.
TEST_CASE("nn.DataParallel's wrapper line defers to the original message printed after it") {
    std::string frames;
    for (int i = 0; i < 40; ++i) frames += "  File \"m.py\", line " + std::to_string(i + 1) + ", in forward\n    x = f(x)\n";
    auto a = run("torch.OutOfMemoryError: Caught OutOfMemoryError in replica 0 on device 0.\n"
                 "Original Traceback (most recent call last):\n" + frames +
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of "
                 "63.42 GiB of which 1.20 GiB is free.\n");
    CHECK(a.source == "caching_allocator");
    CHECK(a.requested_bytes == 512 * MiB);
    CHECK(a.device_index == 0);
    // the wrapper alone (a cut paste) is still the failure, with its device
    auto cut = run("torch.OutOfMemoryError: Caught OutOfMemoryError in replica 1 on device 1.\n");
    CHECK(cut.source == "caching_allocator");
    CHECK(cut.device_index == 1);
    // round 34, an07: the original message cut after "GPU" (wandb's capture); the wrapper above it names the device
    auto head = run("  0%|          | 0/536 [00:00<?, ?it/s]Traceback (most recent call last):\n"
                    "torch.cuda.OutOfMemoryError: Caught OutOfMemoryError in replica 0 on device 0.\n"
                    "Original Traceback (most recent call last):\n" + frames +
                    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB. GPU\n");
    CHECK(head.requested_bytes == 224 * MiB);
    CHECK(head.device_index == 0);
    // a wrapper of an earlier failure, with a step logged after it, names no device of this one
    auto earlier = run("torch.OutOfMemoryError: Caught OutOfMemoryError in replica 1 on device 1.\n"
                       "step 5, loss 1.2\n"
                       "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB. GPU\n");
    CHECK(!earlier.device_index);
}

TEST_CASE("an OOM message wrapped between a figure and its unit") {
    auto a = run("OutOfMemoryError: CUDA out of memory. Tried to allocate 16.00 MiB (GPU 1; 31.75\n"
                 "GiB total capacity; 29.88 GiB already allocated; 11.75 MiB free; 29.98 GiB\n"
                 "reserved in total by PyTorch) If reserved memory is >> allocated memory try\n");
    CHECK(a.capacity_bytes == static_cast<std::int64_t>(31.75 * 1024 * MiB));
    CHECK(a.requested_bytes == 16 * MiB);
    CHECK(a.device_index == 1);
    CHECK(a.allocated_bytes == static_cast<std::int64_t>(29.88 * 1024 * MiB + 0.5));
    // a figure on the next line that is not a continuation is not read as the capacity
    auto b = run("OutOfMemoryError: CUDA out of memory. Tried to allocate 16.00 MiB (GPU 1; 31.75\nGiB of logs written\n");
    CHECK_FALSE(b.capacity_bytes);
}

TEST_CASE("a wrapped OOM message with blanks at the cut, wrapped inside a word") {
    // a blog note's paste: Markdown hard breaks (two spaces) end each line, the terminal wrapped
    // at about 90 columns between a figure and its unit and inside "total"
    auto a = run("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 13.58 GiB (GPU 0; 23.70  \n"
                 "GiB total capacity; 5.30 GiB already allocated; 7.14 GiB free; 14.86 GiB reserved in tota  \n"
                 "l by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to a  \n");
    CHECK(a.capacity_bytes == static_cast<std::int64_t>(23.70 * 1024 * MiB + 0.5));
    CHECK(a.reserved_bytes == static_cast<std::int64_t>(14.86 * 1024 * MiB + 0.5));
    CHECK(a.free_bytes == static_cast<std::int64_t>(7.14 * 1024 * MiB + 0.5));
    // an indented continuation joins the same way
    auto b = run("OutOfMemoryError: CUDA out of memory. Tried to allocate 16.00 MiB (GPU 1; 31.75\n"
                 "    GiB total capacity; 29.88 GiB already allocated; 11.75 MiB free; 29.98 GiB reserved in total by PyTorch)\n");
    CHECK(b.capacity_bytes == static_cast<std::int64_t>(31.75 * 1024 * MiB));
    // a cut phrase followed by other words is no wrap: no reserved figure
    auto c = run("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; "
                 "5.61 GiB already allocated; 1.31 MiB free; 5.80 GiB reserved in tot memory\n");
    CHECK(c.free_bytes);
    CHECK_FALSE(c.reserved_bytes);
}

TEST_CASE("sizes with thousands separators") {
    auto a = run("OutOfMemoryError: Out of memory allocating 26,409,535,488 bytes (allocated so far: 53,224,481,792 bytes).\n");
    CHECK(a.source == "caching_allocator");
    CHECK(a.requested_bytes == 26409535488LL);
    CHECK(a.allocated_bytes == 53224481792LL);
}

TEST_CASE("driver and runtime allocation calls, legacy and library messages") {
    CHECK(run("RuntimeError: cudaMalloc failed: out of memory\n").source == "driver_or_kernel");
    CHECK(run("[torch_memory_saver.cpp] CUresult error  result=2 file=csrc/torch_memory_saver.cpp func=cu_mem_create line=103\n")
              .source == "driver_or_kernel");
    CHECK(run("RuntimeError: CUresult error: 2 (out of memory)\n").source == "driver_or_kernel");
    CHECK(run("failed to RuntimeError: TensorStorage tensor.h 168 cuda failed with error 2 out of memory.\n").source ==
          "driver_or_kernel");
    auto npu = run("rtMalloc execute failed, reason=[driver error:out of memory]\n");
    CHECK(npu.source == "driver_or_kernel");
    CHECK(npu.device_kind == "npu");
    CHECK(run("aclrtMalloc failed, error code is 207001\n").source == "driver_or_kernel");
    auto thc = run("RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/generic/THCStorage.cu:58\n");
    CHECK(thc.source == "caching_allocator");
    CHECK(thc.device_kind == "cuda");
    CHECK(run("RuntimeError: Out of workspace memory in AlignedAlloactor\n").source == "cublas_cudnn_workspace");
    auto tf = run("ResourceExhaustedError: OOM when allocating tensor with shape[128,128,109,109] and type float on "
                  "/job:localhost/replica:0/task:0/device:GPU:1 by allocator GPU_1_bfc\n");
    CHECK(tf.source == "caching_allocator");
    CHECK(tf.device_index == 1);
}

TEST_CASE("a refine signature changes the source and, where it names one, the device kind") {
    const std::string oom = "W op_kernel.cc:1158] Resource exhausted: OOM when allocating tensor with shape[2304,384]\n"
                            "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
                            "ResourceExhaustedError: OOM when allocating tensor with shape[2304,384]\n";
    SUBCASE("TF 1.x names the failing op placed on the CPU: host RAM") {
        auto a = run(oom + "\t [[Node: ema/sub_1 = Sub[T=DT_FLOAT, _device=\"/job:localhost/replica:0/task:0/cpu:0\"](x, y)]]\n");
        CHECK(a.source == "host_oom");
        CHECK(a.device_kind == "cpu");
        CHECK(a.signature == "tf_bfc_allocator+tf_node_on_cpu");
    }
    SUBCASE("an op on the GPU, or a transfer node on the CPU after it, leaves the BFC pool") {
        auto a = run(oom + "\t [[Node: conv/Conv2D = Conv2D[T=DT_FLOAT, strides=[1, 1, 1, 1], _device=\"/job:localhost/replica:0/task:0/device:GPU:0\"](x, w)]]\n"
                           "\t [[Node: r/_12 = _HostRecv[client_terminated=false, recv_device=\"/job:localhost/replica:0/task:0/device:CPU:0\", "
                           "send_device=\"/job:localhost/replica:0/task:0/device:GPU:0\", _device=\"/job:localhost/replica:0/task:0/device:CPU:0\"]()]]\n");
        CHECK(a.source == "caching_allocator");
        CHECK(a.device_kind == "cuda");
    }
}

TEST_CASE("rank from launcher and worker prefixes") {
    struct c { const char* line; std::int64_t rank; };
    for (auto [line, rank] : {c{"[rank3]: torch.OutOfMemoryError", 3}, c{"[rank 3] loss 1.0", 3},
                              c{"[Rank 5] (after 10 iterations) memory (MB)", 5}, c{"[RANK 3] torch.OutOfMemoryError", 3},
                              c{"RANK=2 step 4", 2}, c{"LOCAL_RANK=1 step 4", -1}, c{"FRANK 3] says hi", -1}, c{"(Rank2) step 4", 2},
                              c{"(Rank 2) step 4", 2}, c{"Rank: 7 | step 10 | loss 2.1", 7},
                              c{"Rank 1: out of memory", 1}, c{"(VllmWorker rank=5 pid=3073) ERROR", 5},
                              c{"(Worker_TP1 pid=1234) ERROR 01-06 19:37:15 [multiproc_executor.py:824]", 1},
                              c{"(Worker_PP0_TP3 pid=1234) ERROR", 3}, c{"(Worker_DP1_TP1_EP9 pid=244584) ERROR", 9},
                              c{"[default6]:torch.OutOfMemoryError: CUDA out of memory.", 6},
                              c{"[gpu187:1]:torch.cuda.OutOfMemoryError: CUDA out of memory.", 1},
                              c{"[node-a.cluster_2:3]:  0%|          | 0/125", 3},
                              c{"[12:34:56]: step 4", -1}, c{"[host:1] not a launcher prefix", -1},
                              c{"  [gpu187:1]: not at the line start", -1},
                              c{"[1,4]<stderr>:RuntimeError: CUDA out of memory.", 4},
                              c{"[2]<stderr>:RuntimeError: CUDA out of memory.", 2},
                              c{"[0]<stdout>:Epoch 0:  11%|#   | 52/469 [00:01<00:09, 41.85it/s]", 0},
                              c{"[x]<stdout>: not a rank", -1}, c{"[1,x]<stdout>: not a rank", -1},
                              c{"  rank      : 5 (local_rank: 5)", 5},
                              c{"failed (exitcode: -9) local_rank: 2 (pid: 4102)", -1},
                              c{"(VllmWorkerProcess pid=2421) ERROR 10-14", -1}, c{"Frank3] says hi", -1},
                              c{"comm 0x55 rank 3 nranks 8", -1}, c{"(Worker_PP1_TP0 pid=1) ERROR", -1},
                              c{"[2026-04-16 01:02:09 TP1] Failed to initialize lk_moe: CUDA out of memory.", 1},
                              c{"[2025-09-13 09:09:15 DP0 TP3 EP3] Scheduler hit an exception", 3},
                              c{"[05-10 16:00:15 DP0 PP0 TP2] Decode batch.", 2},
                              c{"(WorkerDict pid=2199833) [2025-04-12 21:11:01 TP0] Scheduler hit an exception", 0},
                              c{"[2025-04-12 21:11:01 PP1 TP0] Prefill batch.", -1},
                              c{"[2025-04-12 21:11:01] INFO server started", -1},
                              c{"[2025-04-12 21:11:01 TPX] not a rank", -1},
                              c{"[rank1234567]: seven digits", 1234567}, c{"[rank12345678]: eight digits", -1},
                              c{"[rank3] rank=5 the prefix first", 3}, c{"[rank3x] rank=5 then the key", 5},
                              c{"[rank]: rank 4: no number in the prefix", 4}, c{"[rank7", -1},
                              c{"plain line", -1}}) {
        CAPTURE(line);
        CHECK(rank_prefix(line) == rank);
    }
    auto a = run("(Worker_TP1 pid=1234) ERROR 01-06 19:37:15 [multiproc_executor.py:824] torch.OutOfMemoryError: CUDA out "
                 "of memory. Tried to allocate 20.00 MiB. GPU 1 has a total capacity of 14.62 GiB of which 3.31 MiB is free.\n");
    CHECK(a.rank == 1);
    CHECK(a.rank_from == "prefix");
    // the message names its worker: Ray's repr, Slurm's task
    auto ray = run("ray.exceptions.RayTaskError(OutOfMemoryError): ray::DTensorPolicyWorkerV2.get_logprobs() (pid=2671339, "
                   "ip=10.65.16.209, actor_id=d5836b60449efbd220b3c2f406000000, repr=DTensorPolicyWorkerV2[rank=5])\n");
    CHECK(ray.rank == 5);
    CHECK(ray.rank_from == "message");
    auto slurm = run("srun: error: gpu001: task 3: Out Of Memory\n");
    CHECK(slurm.source == "host_oom");
    CHECK(slurm.rank == 3);
    // Lightning names each process's rank once: the rank of a file that names one, none for several
    const std::string cuda_err = "RuntimeError: CUDA error: out of memory\n";
    auto one = run("initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/2\n" + cuda_err);
    CHECK(one.rank == 1);
    CHECK(one.rank_from == "process_line");
    CHECK(one.world_size == 2);
    auto both = run("initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/2\ninitializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2\n" + cuda_err);
    CHECK_FALSE(both.rank);
    CHECK(both.world_size == 2);
    auto prefixed = run("Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n[rank1]: " + cuda_err);
    CHECK(prefixed.rank == 1);  // a prefix on the failure line wins
    CHECK(prefixed.rank_from == "prefix");
    // a logger that prefixes a record's first line only: the traceback head names the rank
    const std::string tb = "rank:  3 | 2022-04-03 18:44:26,615 CRITICAL | Traceback (most recent call last):\n"
                           "  File \"train.py\", line 9, in step\n    loss.backward()\n";
    auto head = run(tb + cuda_err);
    CHECK(head.rank == 3);
    CHECK(head.rank_from == "traceback_head");
    auto plain_head = run("Traceback (most recent call last):\n  File \"train.py\", line 9, in step\n" + cuda_err);
    CHECK_FALSE(plain_head.rank);  // an unprefixed head names nothing
    std::string far = tb;  // the head of another, long-finished traceback is not this message's
    for (int i = 0; i < 400; ++i) far += "  File \"x.py\", line 1, in f\n";
    CHECK_FALSE(run(far + cuda_err).rank);
    auto own = run(tb + "[rank1]: " + cuda_err);
    CHECK(own.rank == 1);  // the message's own prefix wins
    CHECK(own.rank_from == "prefix");
}

// The message (or an issue title pasted as it) without the prefix its traceback's frames carry
// (pytorch#145369, DeepSpeed#6737, vllm-ascend#3308 in tests/fixtures/logs/heldout/d13, d14, d22).
TEST_CASE("rank from the prefix of the traceback frames right above an unprefixed failure line") {
    const std::string oom = "Error: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n";
    const std::string frames = "[rank2]:   File \"/x/call.py\", line 210, in _call_callback_hooks\n"
                               "[rank2]:     fn(trainer, trainer.lightning_module, *args, **kwargs)\n";
    auto a = run(frames + oom);
    CHECK(a.rank == 2);
    CHECK(a.rank_from == "frame_prefix");
    auto pdsh = run("worker-5: [rank22]:   File \"/x/engine.py\", line 1103, in _configure_distributed_model\n"
                    "worker-5: [rank22]:     self.module.to(self.device)\n" + oom);
    CHECK(pdsh.rank == 22);
    auto vllm = run("(Worker_TP1 pid=22152) ERROR 10-02 05:47:55 [multiproc_executor.py:671]   File \"/x/worker_v1.py\", "
                    "line 336, in initialize_from_config\n"
                    "(Worker_TP1 pid=22152) ERROR 10-02 05:47:55 [multiproc_executor.py:671]     self.init()\n" + oom);
    CHECK(vllm.rank == 1);
    auto mpi = run("[1,3]<stderr>:  File \"train.py\", line 186, in <module>\n[1,3]<stderr>:    loss = model(x)\n" + oom);
    CHECK(mpi.rank == 3);
    auto own = run(frames + "[rank5]: " + oom);
    CHECK(own.rank == 5);  // the line's own prefix wins
    CHECK(own.rank_from == "prefix");
    auto after = run(oom + frames);
    CHECK_FALSE(after.rank);  // frames after the message belong to the next traceback
    std::string far = frames;
    for (int i = 0; i < 5; ++i) far += "    x = y\n";
    CHECK_FALSE(run(far + oom).rank);  // only the frames right above it
    CHECK_FALSE(run("  File \"/x/call.py\", line 210, in f\n    fn()\n" + oom).rank);  // unprefixed frames
}

TEST_CASE("rank from a prefixed copy of the same message printed after it") {
    // wandb's output.log of a torchrun job (rounds 30-32): the worker prints the exception bare, then
    // the elastic agent's stream prefix prints it again with "[rank0]: "
    const std::string msg =
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.75 GiB. GPU 0 has a total capacity of "
        "79.14 GiB of which 1.30 GiB is free.\n";
    const std::string tb = "Traceback (most recent call last):\n  File \"train.py\", line 277, in main\n";
    const std::string copy = "[rank0]: Traceback (most recent call last):\n[rank0]:   File \"train.py\", line 277, in main\n";
    auto a = run(tb + msg + copy + "[rank0]: " + msg);
    CHECK(a.rank == 0);
    CHECK(a.rank_from == "prefixed_copy");
    // copies under two ranks: not one worker's
    CHECK_FALSE(run(tb + msg + "[rank0]: " + msg + "[rank1]: " + msg).rank);
    // a prefixed message of another request is another failure, not a copy
    auto other = run(tb + msg + "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 1 "
                                "has a total capacity of 79.14 GiB of which 5.00 MiB is free.\n");
    CHECK(other.rank_from != "prefixed_copy");
    // a copy printed before the bare message is not taken
    CHECK(run("[rank3]: " + msg + tb + msg).rank_from != "prefixed_copy");
}

// Slurm's srun -l puts "%*d: " (the task number) before every line of a task (srun(1), --label;
// https://slurm.schedmd.com/srun.html); the lines below follow the form of the job output in
// awslabs/awsome-distributed-ai#220 (tests/fixtures/logs/heldout/j08_srun_label_prefix.log).
TEST_CASE("srun -l task labels are the rank only where the file's lines carry them throughout") {
    const std::string oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total "
                            "capacity of 79.33 GiB of which 1.20 GiB is free.\n";
    const std::string labelled = "0: Epoch 0:  11%|#   | 52/469 [00:01<00:09, 41.85it/s]\n"
                                 "1: Epoch 0:  11%|#   | 52/469 [00:01<00:09, 41.85it/s]\n"
                                 "1: Traceback (most recent call last):\n"
                                 "1:   File \"train.py\", line 92, in train\n";
    SUBCASE("every line labelled: the failing line's label is its rank") {
        auto a = run(labelled + "1: " + oom);
        CHECK(a.rank == 1);
        CHECK(a.rank_from == "srun_label");
        CHECK(a.ranks_failed == std::vector<std::int64_t>{1});
    }
    SUBCASE("labels right-aligned to the widest task number") {
        auto a = run(" 3: Traceback (most recent call last):\n 3:     optimizer.step()\n12: step 40, loss 2.1\n 3: " + oom);
        CHECK(a.rank == 3);
        CHECK(a.rank_from == "srun_label");
    }
    SUBCASE("slurmstepd's oom_kill line, then srun's task line: the task srun names is the rank") {
        const std::string kill = "slurmstepd: error: Detected 1 oom_kill event in StepId=17109804.0. Some of the step "
                                 "tasks have been OOM Killed.\n";
        auto a = run("3:  iteration        1/      10 | lm loss: 1.5E+01 |\n0: " + kill +
                     "srun: error: nid008576: task 2: Out Of Memory\nsrun: Terminating StepId=17109804.0\n");
        CHECK(a.source == "host_oom");
        CHECK(a.rank == 2);
        CHECK(a.rank_from == "message");
        // the oom_kill line alone names no task
        CHECK_FALSE(run(kill).rank);
    }
    SUBCASE("Slurm's own lines are never labelled and do not break the vote") {
        auto a = run(labelled + "1: " + oom + "srun: error: gpu001: task 1: Exited with exit code 1\n" +
                     "slurmstepd: error: *** STEP 42.0 ON gpu001 CANCELLED AT 2024-01-01T00:00:00 ***\n");
        CHECK(a.rank == 1);
    }
    SUBCASE("the batch script's own line before srun: 9 labelled lines in 10 still count") {
        std::string text = "Traceback (most recent call last):\n";
        for (int i = 0; i < 9; ++i) text += "2: step " + std::to_string(i) + ", loss 2.1\n";
        CHECK(run(text + "2: " + oom).rank == 2);
    }
    SUBCASE("an ordinary numbered line is no label") {
        auto a = run("Traceback (most recent call last):\nstep 40, loss 2.1\n3: " + oom);
        CHECK_FALSE(a.rank);
        auto b = run("3: " + oom);  // one labelled line alone
        CHECK_FALSE(b.rank);
        auto pasted = run("1: step 3, loss 2.1\n2: step 4, loss 2.0\nTraceback (most recent call last):\n"
                          "  File \"train.py\", line 9, in step\n3: " + oom);
        CHECK_FALSE(pasted.rank);  // a numbered list among unlabelled lines
    }
    SUBCASE("a clock is no label") {
        CHECK(task_label("12:30:01 step 4") == -1);
        CHECK(task_label("3: x") == 3);
        CHECK(task_label("  12: x") == 12);
        CHECK(task_label("3:") == 3);
        CHECK(task_label("x3: y") == -1);
        CHECK(task_label("1234567: y") == -1);
    }
    SUBCASE("a line's own rank prefix wins over its label") {
        auto a = run(labelled + "1: [rank5]: " + oom);
        CHECK(a.rank == 5);
        CHECK(a.rank_from == "prefix");
    }
    SUBCASE("a task that runs torchrun labels its node, not a rank") {
        auto a = run("0: WARNING:torch.distributed.run:\n" + labelled + "1: " + oom);
        CHECK_FALSE(a.rank);
        // torch.distributed.elastic's summary after the workers' messages (the task's agent reports them)
        auto b = run(labelled + "1: " + oom + "1: torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n");
        CHECK(b.rank_from != "srun_label");
    }
}

TEST_CASE("progress formats: the failing step is last + 1 only where the format allows it") {
    const std::string oom =
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
        "14.62 GiB of which 3.31 MiB is free.\n";
    SUBCASE("tqdm rewrites with \\r, Windows line ends") {
        auto a = run(" 6%|6    | 62/1000 [01:01<15:31,  1.01it/s]\r 6%|6    | 63/1000 [01:02<15:30,  1.01it/s]\r\n" + oom);
        CHECK(a.last_logged_step == 63);
        CHECK(a.step == 64);
        CHECK(a.step_basis == "per_step_format");
    }
    SUBCASE("a counter of samples is the step only while it advances by one a line (unit_advance)") {
        // TRL's PPO dict: 'episode' = samples seen; one a line = one update a line (batch size 1)
        auto dict = [](int e) {
            return "{'eps': 0, 'objective/kl': 34.7, 'lr': 1.2e-06, 'episode': " + std::to_string(e) + ", 'epoch': 0.02}\n";
        };
        std::string ones = "  0%|          | 1/500 [00:09<1:22:52,  9.97s/it]\n", sixty_fours = ones;
        for (int e = 1; e <= 6; ++e) ones += dict(e);
        for (int e = 64; e <= 384; e += 64) sixty_fours += dict(e);
        auto a = run(ones + oom);
        CHECK(a.last_logged_step == 6);
        CHECK(a.step == 7);
        auto b = run(sixty_fours + oom);  // 64 samples an update: the bar's count, never 384
        CHECK(b.last_logged_step == 1);
        CHECK(b.step == 2);
    }
    SUBCASE("Lightning's Rich bar: the batches done, not the epoch counter of its description") {
        auto a = run("Epoch 0/1774 \x1b[38;5;237m\xe2\x94\x81\xe2\x94\x81\xe2\x94\x81\x1b[0m 0/563 \x1b[2m0:02:15 \xe2\x80\xa2 -:--:--\x1b[0m \x1b[2;4m0.00it/s\x1b[0m\n" + oom);
        CHECK(a.last_logged_step == 0);
        CHECK(a.step == 1);
    }
    SUBCASE("a bar that moves k at a time (update(10)) has no last + 1") {
        // gaussian-splatting's train.py: progress_bar.update(10) every 10 iterations
        std::string bar;
        for (int n = 7550; n <= 7610; n += 10)
            bar += "Training progress:  15%|#5        | " + std::to_string(n) + "/50000 [16:13<3:03:28,  3.85it/s, Loss=0.16]\r";
        auto a = run(bar + "\n" + oom);
        CHECK(a.last_logged_step == 7610);
        CHECK_FALSE(a.step);
        CHECK(a.step_basis == "bar_stride");
        CHECK(a.step_stride == 10);  // the measured stride: JSON key, fact oom.step_stride, report line
        CHECK(to_json(a)["oom"]["step_stride"] == 10);
        struct sink : fact_sink {
            std::optional<std::int64_t> stride;
            void emit(fact f) override {
                if (f.name == "oom.step_stride") stride = f.val.as_integer();
            }
        } facts;
        emit_facts(a, facts);
        CHECK(facts.stride == 10);
        // a fast bar whose redraws skip irregularly still advances one step at a time
        std::string fast;
        for (int n : {3190, 3200, 3213, 3220, 3231, 3240, 3252})
            fast += " 6%|6    | " + std::to_string(n) + "/50000 [01:01<15:31,  51.01it/s]\r";
        auto b = run(fast + "\n" + oom);
        CHECK(b.last_logged_step == 3252);
        CHECK(b.step == 3253);
        CHECK(b.step_basis == "per_step_format");
        CHECK_FALSE(b.step_stride);
        CHECK(to_json(b)["oom"]["step_stride"].is_null());
        // too few redraws to tell a stride: last + 1
        auto c = run("Training progress:  15%|#5        | 7600/50000 [16:13<3:03:28,  3.85it/s]\r"
                     "Training progress:  15%|#5        | 7610/50000 [16:13<3:03:28,  3.85it/s]\n" + oom);
        CHECK(c.step == 7611);
        CHECK(c.step_basis == "per_step_format");
        CHECK_FALSE(c.step_stride);
    }
    SUBCASE("a bar at its total has no next step on that bar") {
        const std::string bar = "Epoch 0: 99%|#########9| 142/143 [02:01<00:00,  1.17it/s]\r"
                                "Epoch 0: 100%|##########| 143/143 [02:02<00:00,  1.17it/s]\n";
        // one step short of the total: last + 1, which is the total itself
        auto below = run("Epoch 0: 99%|#########9| 141/143 [02:00<00:01,  1.17it/s]\r"
                         "Epoch 0: 99%|#########9| 142/143 [02:01<00:00,  1.17it/s]\n" + oom);
        CHECK(below.last_logged_step == 142);
        CHECK(below.step == 143);
        CHECK(below.step_basis == "per_step_format");
        // no frames after the bar (the HF dict, cleanup, saving): after the loop, no failing step
        auto after = run(bar + "{'train_runtime': 122.3, 'epoch': 1.0}\n" + oom);
        CHECK(after.last_logged_step == 143);
        CHECK(after.last_logged_total == 143);
        CHECK_FALSE(after.step);
        CHECK(after.step_basis == "bar_total_after_loop");
        // evaluation after the bar: after the loop as well
        auto eval = run(bar + "Traceback (most recent call last):\n  File \"trainer.py\", line 3097, in evaluate\n" + oom);
        CHECK_FALSE(eval.step);
        CHECK(eval.step_basis == "bar_total_after_loop");
        CHECK(eval.phase == "eval");
        // training frames after the bar: the first step of the next pass, never 144
        auto next = run(bar + "Traceback (most recent call last):\n  File \"t.py\", line 9, in train\n    loss.backward()\n"
                              "  File \"torch/_tensor.py\", line 487, in backward\n" + oom);
        CHECK(next.last_logged_step == 143);
        CHECK(next.step == 1);
        CHECK(next.step_basis == "bar_total_next_pass");
        CHECK(next.phase == "backward");
    }
    SUBCASE("evaluating or saving after a step belongs to that step") {
        const std::string bar = " 6%|6    | 62/1000 [01:01<15:31,  1.01it/s]\r 6%|6    | 63/1000 [01:02<15:30,  1.01it/s]\n";
        auto eval = run(bar + "Traceback (most recent call last):\n  File \"trainer.py\", line 3097, in evaluate\n" + oom);
        CHECK(eval.phase == "eval");
        CHECK(eval.step == 63);
        CHECK(eval.step_basis == "after_step_eval");
        auto save = run(bar + "Traceback (most recent call last):\n  File \"train_dreambooth.py\", line 900, in save_weights\n" + oom);
        CHECK(save.phase == "checkpoint_save");
        CHECK(save.step == 63);
        CHECK(save.step_basis == "after_step_checkpoint_save");
        // training frames: the next step, as before
        auto train = run(bar + "Traceback (most recent call last):\n  File \"t.py\", line 9, in train\n    loss.backward()\n"
                               "  File \"torch/_tensor.py\", line 487, in backward\n" + oom);
        CHECK(train.step == 64);
        CHECK(train.step_basis == "per_step_format");
    }
    SUBCASE("activation checkpointing recomputing in backward: the phase is backward, not the recomputed forward") {
        // round 36 (ap01): a non-reentrant checkpoint's unpack hook runs the segment's forward again inside
        // backward; the forward frames under it are nearer the message than any backward frame
        const std::string bar = " 0%|          | 1/200 [03:19<11:02:28, 199.74s/it]\n";
        const std::string head = "Traceback (most recent call last):\n  File \"t.py\", line 9, in train\n    loss.backward()\n"
                                 "  File \"torch/autograd/graph.py\", line 825, in _engine_run_backward\n";
        const std::string fwd = "  File \"torch/nn/modules/module.py\", line 1845, in _call_impl\n"
                                "  File \"diffusers/models/attention.py\", line 1731, in forward\n";
        auto recompute = run(bar + head + "  File \"torch/utils/checkpoint.py\", line 1125, in unpack_hook\n"
                                         "    frame.recompute_fn(*args)\n" + fwd + oom);
        CHECK(recompute.phase == "backward");
        CHECK(recompute.step == 2);
        // the checkpointed forward itself (no unpack hook): forward
        auto forward = run(bar + "Traceback (most recent call last):\n  File \"t.py\", line 8, in train\n"
                                 "  File \"torch/utils/checkpoint.py\", line 496, in checkpoint\n" + fwd + oom);
        CHECK(forward.phase == "forward");
    }
    SUBCASE("an evaluation bar after the training bar: the failure in evaluation keeps the training step") {
        // wandb's output.log of an Unsloth run (round 31, ak08): the training bar drawn once, then the
        // evaluation bar, which counts more lines than the training bar
        const std::string train = "  1%|1         | 1/185 [00:46<2:22:45, 46.55s/it]\n";
        const std::string evalbar = "  2%|2         | 2/94 [00:00<00:30,  3.05it/s]\n"
                                    " 21%|##        | 20/94 [00:14<01:06,  1.11it/s]\n";
        const std::string frames = "Traceback (most recent call last):\n"
                                   "  File \"transformers/trainer.py\", line 3444, in evaluation_loop\n";
        auto a = run(train + evalbar + frames + oom);
        CHECK(a.phase == "eval");
        CHECK(a.last_logged_step == 1);
        CHECK(a.last_logged_total == 185);
        CHECK(a.step == 1);
        CHECK(a.step_basis == "after_step_eval");
        // a training failure after the evaluation: the evaluation bar is not chosen either way
        auto t = run(train + evalbar + "  1%|1         | 2/185 [01:46<2:22:45, 46.55s/it]\n" +
                     "Traceback (most recent call last):\n  File \"t.py\", line 9, in train\n    loss.backward()\n" + oom);
        CHECK(t.last_logged_step == 2);
        // a loading bar closed at its total before the training bar is never the training step
        const std::string load = "Loading checkpoint shards: 100%|##########| 2/2 [00:01<00:00,  1.36it/s]\n";
        const std::string bar = " 6%|6    | 62/1000 [01:01<15:31,  1.01it/s]\n 6%|6    | 63/1000 [01:02<15:30,  1.01it/s]\n";
        auto l = run(load + bar + frames + oom);
        CHECK(l.last_logged_step == 63);
        CHECK(l.step_basis == "after_step_eval");
    }
    SUBCASE("nested bars: the inner bar that advanced counts the steps, not the outer epoch bar") {
        // wandb's output.log of a hand-written loop (round 31, ak09): tqdm over epochs around tqdm over batches
        const std::string nested = "epoch:   0%|          | 0/5 [00:00<?, ?it/s]\n"
                                   "loader:   0%|          | 0/320 [00:00<?, ?it/s]\n"
                                   "loader:  28%|##7       | 88/320 [09:25<24:51,  6.43s/it]\n"
                                   "epoch:   0%|          | 0/5 [09:25<?, ?it/s]\n";
        auto a = run(nested + oom);
        CHECK(a.last_logged_step == 88);
        CHECK(a.last_logged_total == 320);
        CHECK(a.step == 89);
        // a later bar of a smaller total (generation of 128 prompts inside step 1 of 500) is not the step
        auto g = run("  0%|          | 0/500 [00:00<?, ?it/s]\n"
                     "Processed prompts:   0%|          | 0/128 [00:00<?, ?it/s]\n"
                     "Processed prompts:  35%|###5      | 45/128 [00:09<00:17,  4.80it/s]\n"
                     "  0%|          | 0/500 [00:12<?, ?it/s]\n" + oom);
        CHECK(g.last_logged_step == 0);
        CHECK(g.step == 1);
    }
    SUBCASE("a bar without a total that closed before the training bar began is not the step") {
        // round 33, am02: data-processing bars of unknown length, then the nested training bars
        const std::string processing = "processing ./train.jsonl: 2201it [00:00, 4819.72it/s]\n"
                                       "processing ./dev.jsonl: 551it [00:00, 6464.33it/s]\n";
        const std::string bars = "Train Iteration at Epoch 0:   0%|          | 0/276 [00:00<?, ?it/s]\n"
                                 "Epoch:   0%|          | 0/3 [00:00<?, ?it/s] 0/276 [00:00<?, ?it/s]\n";
        auto a = run(processing + bars + oom);
        CHECK(a.last_logged_step == 0);
        CHECK(a.step == 1);
        // a training bar without a total (an iterable dataset) stays the step counter
        auto b = run("Epoch 0: 36it [00:36,  1.00it/s]\nEpoch 0: 37it [00:37,  1.00it/s]\n" + oom);
        CHECK(b.last_logged_step == 37);
        CHECK(b.step == 38);
        // ... and so does one still drawn after the bar of known total began (that bar is not after it)
        auto c = run("Loading:  50%|#####     | 1/2 [00:01<00:01,  1.00it/s]\n"
                     "Epoch 0: 36it [00:36,  1.00it/s]\nEpoch 0: 37it [00:37,  1.00it/s]\n" + oom);
        CHECK(c.last_logged_step == 37);
    }
    SUBCASE("a counter printed with its dots before the batch runs: the failing batch is the printed one") {
        // round 33, am05: `print('===> [Minibatch {}/{}].........'.format(batch_idx+1, n), end='')`
        auto a = run("Mixed: 100%|##########| 2/2 [00:00<00:00, 12.1it/s]\n"
                     ">>>>>>>>>>[Epoch : 1/100000]<<<<<<<<<<\n"
                     "===> [Minibatch 1/7].........Train Loss : 0.52\n"
                     "===> [Minibatch 2/7].........Traceback (most recent call last):\n" + oom);
        CHECK(a.last_logged_step == 2);
        CHECK(a.step == 2);
        CHECK(a.step_basis == "step_header");
        // round 33, am07: a trainer prints `step N` alone on its line when step N begins, its results after it
        auto b = run("step 0\nrecon loss: 0.814\nvalidation recon loss 0.792\nsample saved to results/sampled.0.gif\n"
                     "step 1\nTraceback (most recent call last):\n" + oom);
        CHECK(b.last_logged_step == 1);
        CHECK(b.step == 1);
        CHECK(b.step_basis == "step_header");
        // a step counter with more on its line is still read as a step that finished
        auto c = run("step 0, loss 0.81\nstep 1, loss 0.79\n" + oom);
        CHECK(c.last_logged_step == 1);
        CHECK(c.step == 2);
    }
    SUBCASE("bars of one total from unrelated loops: the running bar began at its own start") {
        // round 32, al11: pipeline loading bars (6 components), the training bar printed once, then
        // sampling bars of 6 denoising steps, each closed at 6/6, the last at 1/6 when evaluation fails
        const std::string loading = "Loading pipeline components...:  33%|###3      | 2/6 [00:02<00:05,  1.30s/it]\n"
                                    "Loading pipeline components...: 100%|##########| 6/6 [00:03<00:00,  1.86it/s]\n"
                                    "Loading pipeline components...: 100%|##########| 6/6 [00:02<00:00,  2.18it/s]\n";
        const std::string train = "  0%|          | 1/50000 [00:06<89:37:11,  6.45s/it]\n -- trained model save --\n";
        const std::string sampling = "100%|##########| 6/6 [00:05<00:00,  1.12it/s]\n"
                                     "100%|##########| 6/6 [00:07<00:00,  1.17s/it]\n"
                                     " 17%|#6        | 1/6 [00:03<00:15,  3.00s/it]\n";
        const std::string eval = "Traceback (most recent call last):\n  File \"distill.py\", line 441, in main\n"
                                 "    evaluation(prompt,\n  File \"distill.py\", line 140, in evaluation\n";
        auto a = run(loading + train + sampling + eval + oom);
        CHECK(a.last_logged_step == 1);
        CHECK(a.last_logged_total == 50000);
        CHECK(a.step == 1);
        CHECK(a.step_basis == "after_step_eval");
        // a per-epoch bar that closed and began again is still the step counter
        auto epochs = run("Epoch 0: 100%|##########| 100/100 [01:40<00:00,  1.00it/s]\n"
                          "Epoch 1:   5%|5         | 5/100 [00:05<01:35,  1.00it/s]\n"
                          "Epoch 1:   6%|6         | 6/100 [00:06<01:34,  1.00it/s]\n" + oom);
        CHECK(epochs.last_logged_step == 6);
        CHECK(epochs.step == 7);
        // ... beside a key=value line printed once in the first epoch (no open bar in between)
        auto logger = run("Epoch 0:  50%|#####     | 50/100 [00:50<00:50,  1.00it/s]\nstep=50 loss=2.1\n"
                          "Epoch 0: 100%|##########| 100/100 [01:40<00:00,  1.00it/s]\n"
                          "Epoch 1:   5%|5         | 5/100 [00:05<01:35,  1.00it/s]\n"
                          "Epoch 1:   6%|6         | 6/100 [00:06<01:34,  1.00it/s]\n" + oom);
        CHECK(logger.last_logged_step == 6);
        // without the training bar between them, the loading and sampling bars stay one counter
        auto alone = run(loading + sampling + eval + oom);
        CHECK(alone.last_logged_step == 1);
        CHECK(alone.last_logged_total == 6);
    }
    SUBCASE("an OOM printed onto the bar's line") {
        auto a = run(" 6%|6    | 63/1000 [01:02<15:30,  1.01it/s]" + oom);
        CHECK(a.last_logged_step == 63);
        CHECK(a.step == 64);
    }
    SUBCASE("a bar as wide as a 300-column terminal: its count lies past byte 900") {
        std::string blocks;
        for (int i = 0; i < 290; ++i) blocks += "\u2588";
        auto a = run(" 94%|" + blocks + "   | 837/888 [9:42:50<34:08, 40.17s/it]" + oom);
        CHECK(a.last_logged_step == 837);
        CHECK(a.step == 838);
    }
    SUBCASE("HF Trainer dict logs between bar updates") {
        auto a = run(" 1%|1         | 10/1000 [00:30<49:30,  3.00s/it]\r\n{'loss': 2.1, 'learning_rate': 1e-05, 'epoch': 0.01}\r\n"
                     " 1%|1         | 11/1000 [00:33<49:27,  3.00s/it]\r\n" + oom);
        CHECK(a.last_logged_step == 11);
        CHECK(a.step == 12);
    }
    SUBCASE("an evaluation bar without a description is not the training step") {
        std::string log;
        for (int i = 0; i <= 100; ++i) log += " 10%|#   | " + std::to_string(i) + "/1000 [05:00<45:00,  3.00s/it]\r";
        log += "\n***** Running Evaluation *****\n";
        for (int i = 0; i <= 40; ++i) log += "  " + std::to_string(i * 100 / 63) + "%|  | " + std::to_string(i) + "/63 [00:0" + std::to_string(i % 10) + "<00:10, 6.0it/s]\r";
        auto a = run(log + "\n" + oom);
        CHECK(a.last_logged_step == 100);
        CHECK(a.phase == "eval");
    }
    SUBCASE("evaluation bars between the training bar's redraws, then an evaluation after it closed") {
        // round 34, an02: wandb cut each evaluation bar short of its total (2366/2368); the training bar
        // closed at 7260/7260; the script's own evaluation (generate) fails after the training ended
        const std::string train = " 50%|#####     | 50/100 [00:50<00:50,  1.00it/s]\n";
        const std::string evalbar = "100%|##########| 38/40 [00:10<00:00,  3.80it/s]\n";
        const std::string closed = "100%|##########| 100/100 [01:40<00:00,  1.00it/s]\n"
                                   "{'train_runtime': 100.0, 'train_loss': 0.71, 'epoch': 2.0}\n";
        const std::string eval = "Traceback (most recent call last):\n  File \"run.py\", line 286, in main\n"
                                 "    rate = evaluate_model(\n  File \"run.py\", line 193, in evaluate_model\n"
                                 "    out = model.generate(\n";
        auto a = run(train + evalbar + closed + evalbar + eval + oom);
        CHECK(a.phase == "eval");
        CHECK(a.last_logged_step == 100);
        CHECK(a.step == 100);
        CHECK(a.step_basis == "after_step_eval");
        // an evaluation bar first drawn after the training bar closed is no sub-loop of it: kept
        auto after = run(train + closed + evalbar + eval + oom);
        CHECK(after.last_logged_step == 38);
        // a failure in training frames keeps the running bar
        auto fwd = run(train + evalbar + closed + evalbar + "Traceback (most recent call last):\n"
                       "  File \"run.py\", line 90, in forward\n" + oom);
        CHECK(fwd.last_logged_step == 38);
    }
    SUBCASE("a hand-written 'Iter N: metric' logger, then a closed test bar and another stage") {
        // round 34, an03: the denoiser's global iteration count, a test bar, the estimator's first forward
        auto a = run("Iter 775: MSE - 0.4899579882621765\nIter 776: MSE - 0.4912870228290558\n"
                     "Validating Denoiser. Epoch: 2\n100%|##########| 33/33 [00:01<00:00, 20.41it/s]\n"
                     "Training Estimator.  Epoch 0\nTraceback (most recent call last):\n" + oom);
        CHECK(a.last_logged_step == 776);
        // an evaluation report of the same shape is no step
        auto val = run("Iter 1: Val loss 3.495, Val took 2.509s\n" + oom);
        CHECK(!val.last_logged_step);
    }
    SUBCASE("a step header names the running step (at_start): the failing step is the last logged one") {
        auto a = run("step 41/100 =========================\nloss 0.5\nstep 42/100 =========================\n"
                     "Taking a training step...\n" + oom);
        CHECK(a.last_logged_step == 42);
        CHECK(a.step == 42);
        CHECK(a.step_basis == "step_header");
    }
    SUBCASE("nanoGPT: the evaluation line is a step header; an iter line beside it settles the last step") {
        const std::string eval0 = "step 0: train loss 12.6510 BPC, val loss 12.6486 BPC\n";
        const std::string iter0 = "iter 0: loss 10.9478, time 26020.58ms, mfu -100.00%\n";
        const std::string eval1 = "step 1: train loss 10.9232, val loss 10.9118\n";
        // the header alone: iteration 0 is running (ap08)
        auto a = run(eval0 + "Traceback (most recent call last):\n" + oom);
        CHECK(a.step == 0);
        CHECK(a.step_basis == "step_header");
        // iteration 0 ended after its header: the iter line is the step, the next one fails (al06)
        auto b = run(eval0 + iter0 + "Traceback (most recent call last):\n" + oom);
        CHECK(b.last_logged_step == 0);
        CHECK(b.step == 1);
        CHECK(b.step_basis == "step_zero");
        // the header of iteration 1 after iteration 0 ended: 1 is running, 0 the last finished (ah06)
        auto c = run(eval0 + iter0 + eval1 + "Traceback (most recent call last):\n" + oom);
        CHECK(c.last_logged_step == 0);
        CHECK(c.step == 1);
        CHECK(c.step_basis == "step_header");
        // an iter line two steps behind the header is no step before it: the rule does not pair them (the
        // counter that started first stays the choice, as before)
        auto d = run("iter 3: loss 3.1, time 100.00ms, mfu 10.00%\nstep 5: train loss 3.0, val loss 3.1\n" + oom);
        CHECK(d.last_logged_step == 3);
        CHECK(d.step_basis != "step_header");
    }
    SUBCASE("a logger printed at multiples of an interval that shows 0 gives no failing step (I-JEPA, round 39)") {
        const std::string l0 = "INFO:root:[1,     0] loss: 0.471 masks: 67.0 42.0 [wd: 4.00e-02]\n";
        auto a = run(l0 + "Traceback (most recent call last):\n" + oom);
        CHECK(a.last_logged_step == 0);
        CHECK(!a.step);
        CHECK(a.step_basis == "sparse_log");
        // a bar counts every step: 0 done, the first fails
        auto b = run("  0%|          | 0/500 [00:00<?, ?it/s]\n" + oom);
        CHECK(b.step == 1);
        // the same logger at 10: the interval is still unknown
        auto c = run(l0 + "INFO:root:[1,    10] loss: 0.301 masks: 70.5 43.0 [wd: 4.00e-02]\n" + oom);
        CHECK(c.last_logged_step == 10);
        CHECK(!c.step);
    }
    SUBCASE("thousands separators in a step (BasicSR)") {
        auto a = run("<epoch: 30, iter:   2,900, lr:1.000e-04> l_pix: 1e-3\n<epoch: 31, iter:   3,000, lr:1.000e-04> l_pix: 1e-3\n" + oom);
        CHECK(a.last_logged_step == 3000);
        CHECK(a.step_basis == "sparse_log");
    }
    SUBCASE("a finished loading bar is not the training step") {
        auto a = run("Loading checkpoint shards: 100%|##########| 7/7 [00:30<00:00,  4.3s/it]\n"
                     "  0%|          | 0/500 [00:00<?, ?it/s]\n" + oom);
        CHECK(a.last_logged_step == 0);
        CHECK(a.step == 1);
    }
    SUBCASE("a bar of one item (0/1) is not the step counter beside another running counter") {
        // allennlp: a 0/1 reading bar, then the untotalled training bar (allenai/allennlp#2515)
        auto a = run("  0%|          | 0/1 [00:00<?, ?it/s]reading instances\n"
                     "loss: 56.8394 ||: : 3181it [1:22:15, 10.61s/it]\n" + oom);
        CHECK(a.last_logged_step == 3181);
        CHECK(a.step == 3182);
        // alone, the one-item bar is still read
        auto alone = run("  0%|          | 0/1 [00:00<?, ?it/s]\n" + oom);
        CHECK(alone.last_logged_step == 0);
    }
    SUBCASE("Lightning: the epoch bar's count, never the validation bar") {
        auto a = run("Epoch 2:  45%|####5     | 450/1000 [02:15<02:45, 3.32it/s, loss=0.123, v_num=0]\n"
                     "Validation DataLoader 0:  40%|####      | 20/50 [00:01<00:01, 15.20it/s]\n" + oom);
        CHECK(a.last_logged_step == 450);
        CHECK(a.phase == "eval");
    }
    SUBCASE("Keras-like: Epoch x/y is not the step") {
        auto a = run("Epoch 3/10\n  62/1000 [=>............................] - ETA: 1:02 - loss: 0.5123\n"
                     "  63/1000 [=>............................] - ETA: 1:01 - loss: 0.5120\n" + oom);
        CHECK(a.last_logged_step == 63);
        CHECK(a.step == 64);
    }
    SUBCASE("mmcv Epoch [e][i/n]: the iteration, every 50: sparse") {
        auto a = run("2021-04-30 16:57:21,427 - mmdet - INFO - Epoch [3][2050/21306]  lr: 1.000e-04, memory: 5737, loss: 1.12\n"
                     "2021-04-30 16:57:42,035 - mmdet - INFO - Epoch [3][2100/21306]  lr: 1.000e-04, memory: 5800, loss: 1.22\n" + oom);
        CHECK(a.last_logged_step == 2100);
        CHECK_FALSE(a.step);
        CHECK(a.step_basis == "sparse_log");
        REQUIRE(a.memory_series.size() == 2);
        CHECK(a.memory_series.back().bytes == 5800 * MiB);
    }
    SUBCASE("detectron2 iter: N with max_mem") {
        auto a = run("[04/27 13:03:34 d2.utils.events]:  eta: 4:00:48  iter: 319  total_loss: 2.127  lr: 0.0007992  max_mem: 8277M\n"
                     "[04/27 13:03:39 d2.utils.events]:  eta: 4:01:09  iter: 339  total_loss: 2.429  lr: 0.00084915  max_mem: 8584M\n"
                     "ERROR [04/27 13:03:54 d2.engine.train_loop]: Exception during training:\n" + oom);
        CHECK(a.last_logged_step == 339);
        CHECK_FALSE(a.step);
        REQUIRE(a.memory_series.size() == 2);
        CHECK(a.memory_series.back().statistic == "max_allocated");
    }
    SUBCASE("detectron2's metrics write after a failure names the failing iteration") {
        const std::string start = "[10/18 19:14:07] d2.engine.train_loop INFO: Starting training from iteration 0\n";
        const std::string total = "[10/18 19:14:10] d2.engine.hooks INFO: Total training time: 0:00:00 (0:00:00 on hooks)\n";
        // iteration 0 finished (its losses and lr are written), iteration 1 failed: no "eta:" yet
        auto a = run(start + oom + total +
                     "[10/18 19:14:10] d2.utils.events INFO:  iter: 1  total_loss: 5.292  data_time: 0.2209   lr: 1e-07  max_mem: 29875M\n");
        CHECK(a.last_logged_step == 0);
        CHECK(a.step == 1);
        CHECK(a.step_basis == "step_header");
        // none finished: the first iteration failed
        auto b = run(start + oom + total + "[10/11 14:05:07 d2.utils.events]:  iter: 0       lr: N/A  max_mem: 3141M\n");
        CHECK_FALSE(b.last_logged_step);
        CHECK(b.step == 0);
        // a periodic write (eta first) is a finished iteration; the failure after it is not numbered
        auto c = run(start + "[10/18 19:19:34] d2.utils.events INFO:  eta: 1 day, 1:51:33  iter: 101  total_loss: 0.5599  "
                             "time: 0.5044  lr: 1.0110e-05  max_mem: 29875M\n" + oom);
        CHECK(c.last_logged_step == 101);
        CHECK_FALSE(c.step);
    }
    SUBCASE("RecBole: the evaluation bar after a closed training bar is no step") {
        auto a = run("Train     0: 100%|#####| 2011/2016 [00:48<00:00, 29.53it/s, GPU RAM: 2.04 G/31.74 G]\r"
                     "Train     0: 100%|#####| 2016/2016 [00:48<00:00, 41.51it/s, GPU RAM: 2.04 G/31.74 G]\n"
                     "04 Jan 13:12    INFO  epoch 0 training [time: 48.57s, train loss: 14171.4118]\n"
                     "Evaluate   :   8%|#    | 1/13 [00:00<00:10,  1.10it/s, GPU RAM: 18.69 G/31.74 G]\n" + oom);
        CHECK(a.last_logged_step == 2016);
    }
    SUBCASE("a bar of another total opened after the training bar closed is another loop") {
        // the training bar closes at 80/80, the validation bar opens at 0/10; the script's step lines
        // (stdout, flushed after stderr's bars) name the training bar's total
        const std::string bars = "  0%|          | 0/80 [00:00<?, ?it/s]\r 99%|#########9| 79/80 [01:49<00:00,  1.18it/s]\r"
                                 "100%|##########| 80/80 [01:50<00:00,  1.24it/s]\n"
                                 "  0%|          | 0/10 [00:00<?, ?it/s]\r  0%|          | 0/10 [00:18<?, ?it/s]\n";
        auto a = run(bars + "Epoch [1/50], Step [50/80], Loss: 0.4341\nEpoch [1/50], Step [75/80], Loss: 0.3431\n" + oom);
        CHECK(a.last_logged_step == 80);
        CHECK_FALSE(a.step);
        CHECK(a.step_basis == "bar_total_after_loop");
        // no step line names the closed bar's total (a loading bar, then the training bar): the open bar counts
        auto b = run(bars + oom);
        CHECK(b.last_logged_step == 0);
        CHECK(b.step == 1);
    }
    SUBCASE("a run start ends the counters of an earlier run in the same file") {
        const std::string first =
            "[08/30 15:48:11] d2.engine.train_loop INFO: Starting training from iteration 0\n"
            "[08/30 15:48:55] d2.utils.events INFO:  eta: 1 day, 19:29:46  iter: 99  total_loss: 56.44  lr: 0.0001  max_mem: 21000M\n"
            "[08/30 15:49:01] d2.utils.events INFO:  eta: 1 day, 19:29:29  iter: 115  total_loss: 54.23  lr: 0.0001  max_mem: 21000M\n";
        // the relaunch fails in its first iteration; the line written after the failure (lr: N/A) names
        // that iteration (detectron2_iter_at_failure) and no finished one
        auto a = run(first + "[08/30 15:54:48] d2.engine.train_loop INFO: Starting training from iteration 0\n" + oom +
                     "[08/30 15:54:49] d2.utils.events INFO:  iter: 0       lr: N/A  max_mem: 22043M\n");
        CHECK_FALSE(a.last_logged_step);
        CHECK(a.step == 0);
        // the same run's counter still counts when it started after the run start
        auto b = run(first + oom);
        CHECK(b.last_logged_step == 115);
        // HF Trainer: a second train() call's header ends the first call's bar
        auto c = run("{'loss': 1.9, 'learning_rate': 1e-05, 'epoch': 0.5}\n 50%|#####     | 50/100 [01:00<01:00,  1.2s/it]\n"
                     "***** Running training *****\n" + oom);
        CHECK_FALSE(c.last_logged_step);
        // mmengine: the relaunch's CheckpointHook line ("Checkpoints will be saved to ...") before its first iteration
        const std::string mm_start = "09/16 03:15:31 - mmengine - INFO - Checkpoints will be saved to /work_dirs/retinanet.\n";
        const std::string mm_iter =
            "09/16 03:14:21 - mmengine - INFO - Epoch(train)  [8][  100/15169]  lr: 3.1250e-04  eta: 14:23:47  time: 0.6171  memory: 6603  loss: 1.7183\n";
        auto d = run(mm_start + mm_iter + "KeyboardInterrupt\n" + mm_start + oom);
        CHECK_FALSE(d.last_logged_step);
        auto e = run(mm_start + mm_iter + oom);  // one run: its own iteration counts
        CHECK(e.last_logged_step == 100);
    }
    SUBCASE("step=N and Step N/M of hand-written loops, consecutive") {
        auto a = run("step=41 loss=2.1\nstep=42 loss=2.0\n" + oom);
        CHECK(a.last_logged_step == 42);
        CHECK(a.step == 43);
        CHECK(a.step_basis == "consecutive_steps");
        auto b = run("Step 8/100 loss 2.0\nStep 9/100 loss 1.9\n" + oom);
        CHECK(b.last_logged_step == 9);
        CHECK(b.step == 10);
    }
    SUBCASE("tqdm with unit_scale: float counts are the step") {
        auto a = run("Training:   3%|3         | 1.00/36.0 [00:04<02:20,  4.01s/it]\r"
                     "Training:   6%|5         | 2.00/36.0 [00:08<02:16,  4.01s/it]\n" + oom);
        CHECK(a.last_logged_step == 2);
        CHECK(a.step == 3);
    }
    SUBCASE("llama-recipes: the line's step N/M completed, not its bar's accumulation count") {
        auto a = run("Training Epoch: 1/3, step 16/36 completed (loss: 0.172):  44%|####4     | 4/9 [04:37<05:24, 64.93s/it]\n"
                     "Training Epoch: 1/3, step 17/36 completed (loss: 0.165):  44%|####4     | 4/9 [04:53<05:24, 64.93s/it]\n" +
                     oom);
        CHECK(a.last_logged_step == 17);
    }
    SUBCASE("a bar whose postfix prints the optimizer step (gradient accumulation): the postfix is the step") {
        // round 29, ai03: the bar counts micro-batches (4 a step), the postfix the optimizer steps
        const std::string bar = "Epoch 1/60:   0%|          | 3/920 [01:35<5:57:36, 23.40s/it]\r"
                                "Epoch 1/60:   0%|          | 3/920 [01:41<5:57:36, 23.40s/it, loss=1.0970, lr=1.50e-07, step=1]\r"
                                "Epoch 1/60:   0%|          | 4/920 [01:41<4:14:55, 16.70s/it, loss=1.0970, lr=1.50e-07, step=1]\r"
                                "Epoch 1/60:   1%|          | 5/920 [01:44<3:00:04, 11.81s/it, loss=1.0970, lr=1.50e-07, step=1]\n";
        auto a = run(bar + oom);
        CHECK(a.last_logged_step == 1);
        CHECK(a.step == 2);
        CHECK(a.step_basis == "per_step_format");
        // a postfix that agrees with the bar (one step a batch): the same count either way
        auto same = run("  1%|          | 4/920 [00:04<15:00,  1.01it/s, loss=1.2, step=4]\r"
                        "  1%|          | 5/920 [00:05<15:00,  1.01it/s, loss=1.1, step=5]\n" + oom);
        CHECK(same.last_logged_step == 5);
        CHECK(same.step == 6);
        // diffusers' `step_loss=` is no step key
        auto loss = run("Steps:   1%|          | 5/920 [00:05<15:00,  1.01it/s, lr=1e-05, step_loss=0.1]\n" + oom);
        CHECK(loss.last_logged_step == 5);
        // a postfix step larger than the bar's count (a global step over per-epoch bars) keeps the bar's count
        auto global = run("Epoch 2:   5%|5         | 5/100 [00:05<01:35,  1.00it/s, step=105]\n" + oom);
        CHECK(global.last_logged_step == 5);
        CHECK(global.step == 6);
    }
    SUBCASE("eta: .. epoch: N  step: N recorders") {
        auto a = run("eta: 0:05:38  epoch: 2  step: 2454  rgb_loss: 0.1126  psnr: 15.9341  max_mem: 22170\n" + oom);
        CHECK(a.last_logged_step == 2454);
    }
    SUBCASE("DeepSpeed step= every 10 steps: only the last logged step") {
        auto a = run("[2024-01-01 10:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0, lr=[1.9e-05]\n"
                     "[2024-01-01 10:01:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=20, skipped=0, lr=[1.9e-05]\n" + oom);
        CHECK(a.last_logged_step == 20);
        CHECK_FALSE(a.step);
        CHECK(a.step_basis == "sparse_log");
    }
    SUBCASE("Megatron logs at multiples of its interval: a lone iteration 1 means every iteration") {
        const std::string line = " iteration        1/      10 | consumed samples:           32 | lm loss: 1.575255E+01 |\n";
        auto a = run(line + oom);
        CHECK(a.last_logged_step == 1);
        CHECK(a.step == 2);
        CHECK(a.step_basis == "consecutive_steps");
        // a lone iteration 10 may be every 10th: only the last logged step
        auto b = run(" iteration       10/     100 | consumed samples:          320 | lm loss: 1.575255E+01 |\n" + oom);
        CHECK(b.last_logged_step == 10);
        CHECK_FALSE(b.step);
        CHECK(b.step_basis == "sparse_log");
        // a format without that rule keeps a lone 1 sparse (hand-written loops may log step 1, then every 10th)
        auto c = run("[2024-01-01 10:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=1, skipped=0, lr=[1.9e-05]\n" + oom);
        CHECK(c.last_logged_step == 1);
        CHECK_FALSE(c.step);
    }
    SUBCASE("a sparse step logger and a line printed once per step: none after the newest means the next step") {
        // round 35, ao02: DeepSpeed's `step=` every 10 steps, the loop's own `Epoch N, Loss:` print every step
        auto ds = [](int step) {
            return "[2025-04-10 06:18:39,026] [INFO] [logging.py:96:log_dist] [Rank 0] step=" + std::to_string(step) +
                   ", skipped=0, lr=[1e-06, 1e-06], mom=[(0.9, 0.99), (0.9, 0.99)]\n";
        };
        auto steps = [&](int from, int to) {
            std::string t;
            for (int s = from; s <= to; ++s) t += "Epoch 5, Loss: 0.33, Positive Score: 1.0\nN_POS:6|N_NEG:6\n";
            return t;
        };
        const std::string log = steps(1, 10) + ds(10) + steps(11, 20) + ds(20) + "N_POS:9|N_NEG:12\n";
        auto a = run(log + oom);
        CHECK(a.last_logged_step == 20);
        CHECK(a.step == 21);
        CHECK(a.step_basis == "per_step_lines");
        // steps printed after the newest logger line (or a print that may follow the logger in its own step):
        // the failing step is one of the next 10
        auto b = run(log + steps(21, 22) + oom);
        CHECK(b.last_logged_step == 20);
        CHECK_FALSE(b.step);
        CHECK(b.step_basis == "sparse_log");
        // a print that is not once per step (every epoch) says nothing
        auto c = run(steps(1, 1) + ds(10) + steps(2, 2) + ds(20) + oom);
        CHECK(c.last_logged_step == 20);
        CHECK_FALSE(c.step);
    }
    SUBCASE("a step logger glued to a bar of micro-batches: the logger counts the steps") {
        // round 35, ao09: 8 micro-batches a step, the logger every 10 steps, glued to the bar's redraw
        auto bar = [](int n) {
            return "Epoch 1/3:   1%|          | " + std::to_string(n) + "/13244 [10:47<49:56:40, 13.66s/it, loss=5.06]";
        };
        auto logger = [](int s) { return "20:24:22 INFO epoch 1  step " + std::to_string(s) + "  loss 2.7815\n"; };
        const std::string log = bar(0) + "\n" + bar(79) + logger(10) + bar(159) + logger(20) + bar(239) + logger(30);
        auto a = run(log + bar(243) + "\n" + oom);
        CHECK(a.last_logged_step == 30);
        CHECK(a.step == 31);
        CHECK(a.step_basis == "micro_batch_bar");
        // more than a step's micro-batches after the newest logger line: the logged step, no failing step
        auto b = run(log + bar(260) + "\n" + oom);
        CHECK(b.last_logged_step == 30);
        CHECK_FALSE(b.step);
        // a logger whose step is not a fixed multiple of the bar's count (its own count) leaves the bar
        auto c = run(bar(0) + "\n" + bar(79) + logger(10) + bar(120) + logger(20) + bar(243) + "\n" + oom);
        CHECK(c.last_logged_step == 243);
        CHECK(c.step == 244);
    }
    SUBCASE("a bar closed at its total and drawn once more at 0 did not move: the later training bar counts") {
        // round 35, ao09: the terminal capture printed the download bar's first draw after its last
        const std::string fetched = "Fetching 4 files: 100%|##########| 4/4 [00:00<00:00, 40920.04it/s]\n"
                                    "Download complete: : 0.00B [00:00, ?B/s]          | 0/4 [00:00<?, ?it/s]\n";
        auto a = run(fetched + "Epoch 1/3:   0%|          | 0/13244 [00:00<?, ?it/s]\n"
                               "Epoch 1/3:   0%|          | 5/13244 [00:40<30:00:00,  8.0s/it]\n" + oom);
        CHECK(a.last_logged_step == 5);
        CHECK(a.step == 6);
        // a per-epoch bar begun again at 0 with no other bar is still the counter (step 0 of the next epoch)
        auto b = run("Train: 100%|##########| 313/313 [02:00<00:00,  2.6it/s]\nTrain:   0%|          | 0/313 [00:00<?, ?it/s]\n" +
                     oom);
        CHECK(b.last_logged_step == 0);
        CHECK(b.step == 1);
    }
}

TEST_CASE("phase from the traceback: the context wins, then the innermost frame") {
    auto with = [](const std::string& frames) {
        return run("step 10, loss 1.0\nstep 11, loss 1.0\nTraceback (most recent call last):\n" + frames +
                   "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n");
    };
    CHECK(with("  File \"t.py\", line 9, in train\n    loss.backward()\n  File \"torch/_tensor.py\", line 487, in backward\n")
              .phase == "backward");
    CHECK(with("  File \"t.py\", line 9, in train\n  File \"m.py\", line 1501, in _call_impl\n  File \"m.py\", line 20, in forward\n")
              .phase == "forward");
    CHECK(with("  File \"t.py\", line 9, in train\n    optimizer.step()\n  File \"torch/optim/adamw.py\", line 184, in step\n")
              .phase == "optimizer_step");
    CHECK(with("  File \"m.py\", line 20, in forward\n    loss = loss_fct(shift_logits, shift_labels)\n  File \"f.py\", line 3053, in cross_entropy\n")
              .phase == "loss");
    CHECK(with("  File \"trainer.py\", line 3097, in evaluate\n  File \"m.py\", line 1501, in _call_impl\n  File \"m.py\", line 20, in forward\n")
              .phase == "eval");
    CHECK(with("  File \"trainer.py\", line 2400, in _save_checkpoint\n  File \"torch/serialization.py\", line 1, in save\n")
              .phase == "checkpoint_save");
    CHECK(with("  File \"dataloader.py\", line 633, in __next__\n  File \"fetch.py\", line 51, in fetch\n").phase == "data_loading");
    auto init = run("Loading checkpoint shards:   0%|          | 0/7 [00:00<?, ?it/s]\nLoading model weights\n"
                    "RuntimeError: CUDA error: out of memory\n");
    CHECK(init.phase == "model_load");
    CHECK_FALSE(init.last_logged_step);
    // an IPython traceback shows numbered source around each call; only the arrowed line ran
    // (here the training epoch, not the validation a few lines below it; a Windows path)
    auto nb = run("Epoch 3/3:   0%|          | 13/4881 [00:08<52:59,  1.53it/s]\n"
                  "File D:\\proj\\src\\trainer.py:260, in Trainer.train(self)\n"
                  "    259 # Training\n"
                  "--> 260 train_loss, train_acc = self.train_epoch(epoch)\n"
                  "    262 # Validation\n"
                  "    263 val_loss, val_acc, val_f1 = self.validate()\n"
                  "RuntimeError: CUDA error: out of memory\n");
    CHECK(nb.phase != "eval");
    CHECK(nb.last_logged_step == 13);
    CHECK(nb.step == 14);
    // the arrowed line itself still names the pass
    auto ev = run("Epoch 3/3:   0%|          | 13/4881 [00:08<52:59,  1.53it/s]\n"
                  "File D:\\proj\\src\\trainer.py:263, in Trainer.train(self)\n"
                  "    262 # Validation\n"
                  "--> 263 val_loss, val_acc, val_f1 = self.validate()\n"
                  "RuntimeError: CUDA error: out of memory\n");
    CHECK(ev.phase == "eval");
    // a phase line before the last step line is history, not the failure's phase
    auto old = run("***** Running Evaluation *****\nstep 10, loss 1.0\nstep 11, loss 1.0\n"
                   "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n");
    CHECK(old.phase.empty());
}

TEST_CASE("memory series: warm-up split from steady growth") {
    std::string log;
    for (int s = 1; s <= 40; ++s) {
        double gib = s <= 3 ? 20.0 + 10.0 * s : 50.0 + 0.05 * (s - 3);  // warm-up, then 50 MiB/step
        char buf[200];
        std::snprintf(buf, sizeof buf, "[titan] 2025-01-01 10:00:00,000 - root - INFO - step: %d  loss:  2.0  memory: %.2fGiB(%.2f%%)\n",
                      s, gib, gib / 80.0 * 100);
        log += buf;
    }
    auto a = run(log + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n");
    REQUIRE(a.memory_series.size() == 40);
    REQUIRE(a.steady_growth_bytes_per_step);
    CHECK(a.memory_series[a.steady_from].step == 3);  // 50 GiB at step 3 is on the steady line
    CHECK(std::llabs(static_cast<std::int64_t>(*a.steady_growth_bytes_per_step) - static_cast<std::int64_t>(0.05 * 1024) * MiB) < 2 * MiB);
    CHECK(*a.steady_r2 > 0.99);
    CHECK(*a.growth_bytes_per_step > *a.steady_growth_bytes_per_step);  // the warm-up inflates the plain fit
}

// logs44 (round 40): a hand-written RL loop's `Episode N:` print (episode_counter_print, unit_advance)
TEST_CASE("progress formats: an RL loop's episode print is the step only while it advances by one a line") {
    const std::string oom =
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
        "47.53 GiB of which 8.25 MiB is free.\n";
    SUBCASE("an episode a line: the update count, the next one failed") {
        auto a = run("Episode 0: Question: find the next term\nGenerated: 3204, Gold: 2840, Reward: 0.33\n"
                     "Episode 1: Question: what comes next\nGenerated: 7, Gold: 14, Reward: 0.10\n" + oom);
        CHECK(a.last_logged_step == 1);
        CHECK(a.step == 2);
    }
    SUBCASE("every tenth episode printed: not the step") {
        auto a = run("Episode 10, reward: 0.31\nEpisode 20, reward: 0.42\nEpisode 30, reward: 0.40\n" + oom);
        CHECK_FALSE(a.last_logged_step);
        CHECK_FALSE(a.step);
    }
    SUBCASE("one episode line alone cannot show that it counts updates") {
        auto a = run("Episode 0: Question: find the next term\n" + oom);
        CHECK_FALSE(a.step);
    }
}

TEST_CASE("progress formats: the colon form of an RL loop's episode print") {
    auto a = run("Episode: 40, Reward: 0.51, Loss: 0.120\nEpisode: 41, Reward: 0.62, Loss: 0.118\n"
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n");
    CHECK(a.last_logged_step == 41);
    CHECK(a.step == 42);
}

// logs45 (round 41): nested tqdm bars whose outer (epoch) bar advanced, and the Time-Series-Library logger
TEST_CASE("progress formats: nested bars whose outer epoch bar moved count the steps on the inner bar") {
    const std::string oom = "RuntimeError: CUDA out of memory. Tried to allocate 646.00 MiB (GPU 0; 11.90 GiB total "
                            "capacity; 8.28 GiB already allocated; 223.25 MiB free; 10.03 GiB reserved in total)\n";
    // ALFRED: `epoch:` drawn once per epoch, `batch:` runs to its total each epoch, evaluation bars between
    auto inner_run = [](int from, int to, int total) {
        std::string s;
        for (int i = from; i <= to; ++i)
            s += "\rbatch:  50%|#####     | " + std::to_string(i) + "/" + std::to_string(total) +
                 " [00:01<00:01,  1.00it/s]\x1b[A\n";
        return s;
    };
    auto epoch = [](int n) { return "\repoch:  10%|#         | " + std::to_string(n) + "/20 [09:27<2:59:40, 567.40s/it]\n"; };
    SUBCASE("the outer bar advanced between runs of the inner bar: the inner bar is the step") {
        auto a = run(epoch(0) + inner_run(0, 30, 30) + inner_run(0, 2, 2) + epoch(1) + inner_run(0, 30, 30) +
                     inner_run(0, 2, 2) + epoch(2) + inner_run(0, 4, 30) + oom);
        CHECK(a.last_logged_step == 4);
        CHECK(a.step == 5);
    }
    SUBCASE("a training bar redrawn between its advances keeps the choice") {
        // the outer bar has more lines than values: it is redrawn while it counts, a training bar
        std::string t = "\r  0%|          | 0/20 [00:00<?, ?it/s]\n\r  0%|          | 0/20 [00:05<?, ?it/s]\n";
        auto a = run(t + inner_run(0, 30, 30) + "\r  5%|5         | 1/20 [00:09<02:51, 9.00s/it]\n" +
                     "\r  5%|5         | 1/20 [00:12<02:51, 9.00s/it]\n" + inner_run(0, 30, 30) +
                     "\r 10%|#         | 2/20 [00:18<02:42, 9.00s/it]\n" + inner_run(0, 4, 30) + oom);
        CHECK(a.last_logged_step == 2);
    }
    SUBCASE("an inner bar that ran once is not known to be nested") {
        // logs63: an outer bar described "epoch:" counts epochs and is never the step (tqdm_bar's unless), so the
        // outer bar here has another description
        auto outer = [](int n) {
            return "\rtrain:  10%|#         | " + std::to_string(n) + "/20 [09:27<2:59:40, 567.40s/it]\n";
        };
        auto a = run(outer(0) + outer(1) + inner_run(0, 4, 30) + oom);
        CHECK(a.last_logged_step != 4);
    }
    SUBCASE("an outer bar described epoch counts epochs: the inner bar is the step though it ran once") {
        auto a = run(epoch(0) + epoch(1) + inner_run(0, 4, 30) + oom);
        CHECK(a.last_logged_step == 4);
        CHECK(a.step == 5);
    }
}

TEST_CASE("progress formats: the Time-Series-Library logger, not its evaluation loops' counters") {
    // OpenLTM (round 41, au03): every 100 iterations within the epoch, then the evaluation loops' own `iters:`
    const std::string oom = "RuntimeError: CUDA out of memory. Tried to allocate 4.43 GiB (GPU 0; 31.73 GiB total "
                            "capacity; 16.58 GiB already allocated; 950.69 MiB free; 29.64 GiB reserved in total)\n";
    const std::string train = "\titers: 1300, epoch: 1 | loss: 0.2389431\n\tspeed: 0.2350s/iter; left time: 6462.6209s\n"
                              "\titers: 1400, epoch: 1 | loss: 0.2667516\n\tspeed: 0.2567s/iter; left time: 7032.7417s\n";
    const std::string evals = "Epoch: 1 cost time: 338.98932337760925\n"
                              "\titers: 100, speed: 0.2874s/iter, left time: 31.3243s\n"
                              "\titers: 400, speed: 0.2757s/iter, left time: 7.7188s\n"
                              "Epoch: 1, Steps: 1440 | Vali Loss: 0.4827343 Test Loss: 0.5687996\n";
    auto a = run(train + evals + "Traceback (most recent call last):\n" + oom);
    CHECK(a.last_logged_step == 1400);
    CHECK_FALSE(a.step);  // every 100 iterations: the failing one is not known
    CHECK(a.step_basis == "sparse_log");
}

TEST_CASE("progress formats: a Time-Series-Library run that stopped early, then failed in its test phase") {
    // OpenLTM (round 42, av01-av02): training ends by early stopping, `exp.test` runs, and the OOM is in the
    // model's forward on a test batch: the training logger's newest value is the last step, no training step fails
    const std::string oom = "RuntimeError: CUDA out of memory. Tried to allocate 9.75 GiB (GPU 0; 31.73 GiB total "
                            "capacity; 20.93 GiB already allocated; 3.45 GiB free; 27.12 GiB reserved in total)\n";
    const std::string train = "\titers: 2100, epoch: 8 | loss: 0.1596749\n\tspeed: 0.3796s/iter; left time: 1723.5201s\n"
                              "\titers: 2200, epoch: 8 | loss: 0.1353280\n\tspeed: 0.3797s/iter; left time: 1685.9240s\n"
                              "Epoch: 8 cost time: 852.4501352310181\n"
                              "\titers: 100, speed: 0.2218s/iter, left time: 114.0183s\n"
                              "\titers: 600, speed: 0.2127s/iter, left time: 2.9775s\n"
                              "Epoch: 8, Steps: 2213 | Vali Loss: 0.1662299 Test Loss: 0.2062072\n";
    SUBCASE("early stopping, then the test phase: eval, last step kept, no failing step") {
        auto a = run(train + "EarlyStopping counter: 3 out of 3\nEarly stopping\n>>>>>>>testing : forecast_x<<<<<<<\n"
                             "Traceback (most recent call last):\n  File \"run.py\", line 134, in <module>\n"
                             "    exp.test(setting)\n  File \"/h/OpenLTM/exp/exp_forecast.py\", line 259, in test\n"
                             "    outputs = self.model(batch_x, batch_x_mark, None, batch_y_mark)\n" + oom);
        CHECK(a.last_logged_step == 2200);
        CHECK_FALSE(a.step);
        CHECK(a.phase == "eval");
    }
    SUBCASE("the next epoch's backward after the same lines: training, not eval") {
        auto a = run(train + "Traceback (most recent call last):\n  File \"run.py\", line 130, in <module>\n"
                             "    exp.train(setting)\n  File \"/h/OpenLTM/exp/exp_forecast.py\", line 180, in train\n"
                             "    loss.backward()\n" + oom);
        CHECK(a.last_logged_step == 2200);
        CHECK(a.phase != "eval");
    }
}

TEST_CASE("progress formats: an epoch-only loop (one summary line per epoch) gives no training step") {
    // SiameseACP (round 43, aw01-aw02): `epoch: N, loss: ...` and a `train_acc ... test_acc ...` line after each
    // epoch, then the OOM in backward; an epoch count is not a training step, so neither step is read
    const std::string oom = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB (GPU 1; 23.70 GiB total "
                            "capacity; 441.77 MiB already allocated; 5.81 MiB free; 464.00 MiB reserved in total)\n";
    const std::string tb = "Traceback (most recent call last):\n  File \"train.py\", line 96, in <module>\n"
                           "    loss.backward()\n";
    SUBCASE("epoch lines only: no last step, no failing step") {
        std::string text;
        for (int e = 1143; e <= 1145; ++e)
            text += "epoch: " + std::to_string(e) + ", loss: 7.9, loss1: 0.4, loss2_3: 7.5\n"
                    "\ttrain_acc: 0.9964, test_acc: 0.75, time: 1.77\n";
        auto a = run(text + tb + oom);
        CHECK_FALSE(a.last_logged_step);
        CHECK_FALSE(a.step);
        CHECK(a.phase == "backward");
    }
    SUBCASE("the same loop printing its batch within the epoch: that counter is the step") {
        std::string text;
        for (int b = 10; b <= 40; b += 10)
            text += "Epoch [4/10], Step [" + std::to_string(b) + "/97], Loss: 0.41\n";
        auto a = run(text + tb + oom);
        CHECK(a.last_logged_step == 40);
    }
}

TEST_CASE("progress formats: llm_trainer's file and batch counters (logs50)") {
    // qibin0506/llm_trainer logs after each optimizer step `epoch: E, file: i/n, batch: j/m -> loss: ...`; the
    // batch counts within the data file and starts again at 1 with the next file
    const std::string oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
                            "total capacity of 23.65 GiB of which 1.00 GiB is free.\n";
    const std::string tb = "Traceback (most recent call last):\n  File \"train.py\", line 18, in <module>\n"
                           "    trainer.train()\n";
    SUBCASE("within one file: the batch is the step") {
        std::string text;
        for (int b = 447; b <= 449; ++b)
            text += "epoch: 0, file: 1/10, batch: " + std::to_string(b) + "/78125 -> loss: 2.31, moe_aux_loss: 0.0\n";
        auto a = run(text + tb + oom);
        CHECK(a.last_logged_step == 449);
        CHECK(a.step == 450);
    }
    SUBCASE("across a file boundary: the counter of the new file") {
        std::string text = "epoch: 0, file: 1/10, batch: 78124/78125 -> loss: 2.2\n"
                           "epoch: 0, file: 1/10, batch: 78125/78125 -> loss: 2.2\n";
        for (int b = 1; b <= 3; ++b)
            text += "epoch: 0, file: 2/10, batch: " + std::to_string(b) + "/77990 -> loss: 2.4\n";
        auto a = run(text + tb + oom);
        CHECK(a.last_logged_step == 3);
        CHECK(a.step == 4);
    }
    SUBCASE("its exception logger's line is no step") {
        auto a = run("epoch: 0, batch: 449 -> CUDA out of memory at trainer.py line 606\n" + tb + oom);
        CHECK_FALSE(a.last_logged_step);
    }
}

TEST_CASE("phases: a 3D Gaussian Splatting test-iteration report is the evaluation after its step (logs50)") {
    const std::string bar = "Training progress:  23%|##        | 7000/30000 [05:10<17:00, 22.5it/s, Loss=0.0405]";
    const std::string frames = "Traceback (most recent call last):\n"
                               "  File \"train.py\", line 230, in <module>\n    training(lp.extract(args))\n"
                               "  File \"train.py\", line 137, in training\n    training_report(tb_writer, iteration)\n";
    const std::string oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a "
                            "total capacity of 23.65 GiB of which 512.00 MiB is free.\n";
    SUBCASE("inside training_report: eval, after step 7000") {
        auto a = run(bar + frames + "  File \"train.py\", line 196, in training_report\n"
                     "    images = torch.cat((images, image.unsqueeze(0)), dim=0)\n" + oom);
        CHECK(a.phase == "eval");
        CHECK(a.last_logged_step == 7000);
        CHECK(a.step == 7000);
    }
    SUBCASE("in the step's own render: training, the next step") {
        auto a = run(bar + "Traceback (most recent call last):\n  File \"train.py\", line 230, in <module>\n"
                     "    training(lp.extract(args))\n  File \"train.py\", line 90, in training\n"
                     "    loss.backward()\n" + oom);
        CHECK(a.phase != "eval");
        CHECK(a.step == 7001);
    }
}

TEST_CASE("progress formats from the producers (logs47): look-alikes after the training lines keep the last step") {
    const std::string oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB "
                            "total capacity; 75.02 GiB already allocated; 1.20 GiB free; 76.10 GiB reserved in total)\n";
    SUBCASE("BasicSR's validation line names its iteration but is no step (BasicSR#204)") {
        auto a = run("19-08-09 08:25:25.996 - INFO: <epoch: 86, iter: 107,200, lr:2.500e-05> l_g_pix: 1.4819e-03\n"
                     "19-08-09 08:27:24.709 - INFO: <epoch: 86, iter: 107,000> psnr: 1.3831e+01\n" + oom);
        CHECK(a.last_logged_step == 107200);
        CHECK_FALSE(a.step);  // every print_freq iterations
    }
    SUBCASE("BasicSR 1.x's logger (HAT#114)") {
        auto a = run("[train..][epoch: 14, iter: 135,000, lr:(2.000e-04,)] [eta: 3 days, 16:37:09] l_pix: 1.3e-02\n"
                     "[train..][epoch: 14, iter: 135,100, lr:(2.000e-04,)] [eta: 3 days, 16:35:37] l_pix: 1.2e-02\n" + oom);
        CHECK(a.last_logged_step == 135100);
        CHECK_FALSE(a.step);
    }
    SUBCASE("Keras 3's bar, epoch by epoch (keras-core#555)") {
        auto a = run("Epoch 1/3\n32/32 ━━━━━━━━━━━━━━━━━━━━ 1s 4ms/step - loss: 0.2566\nEpoch 2/3\n"
                     "32/32 ━━━━━━━━━━━━━━━━━━━━ 0s 4ms/step - loss: 0.2151\nEpoch 3/3\n" + oom);
        CHECK(a.last_logged_step == 32);
    }
    SUBCASE("vLLM's generation bar after the training bar is no step (OpenRLHF#519, lmm-r1#16)") {
        auto a = run("Train step of epoch 0:  84%|████████▍ | 54/64 [03:01<00:30,  3.10s/it, pg=0.00142]\n"
                     "Train step of epoch 0:  86%|████████▌ | 55/64 [03:04<00:27,  3.10s/it, pg=0.00142]\n"
                     "Processed prompts:   2%|▏         | 4/256 [00:02<01:51,  2.26it/s, est. speed input: 269.57 toks/s]\n"
                     + oom);
        CHECK(a.last_logged_step == 55);
    }
    SUBCASE("a YOLO validation bar alone is no step (yolov5#8401)") {
        auto a = run("               Class     Images     Labels          P          R     mAP@.5 mAP@.5:.95: 100%|"
                     "██████████| 25/25 [00:19<00:00,  1.29it/s]\n" + oom);
        CHECK_FALSE(a.last_logged_step);
    }
}

TEST_CASE("a caught OOM: the job warns once per skipped batch and its bar goes on (logs62)") {
    auto warn = [](int n, const std::string& gib) {
        return "WARNING:root:CUDA out of memory. Tried to allocate " + gib + " GiB (GPU 0; 10.76 GiB total capacity; "
               "4.01 GiB already allocated; 356.00 MiB free; 5.54 GiB cached)              | " + std::to_string(n) +
               "/2538 [00:01<53:05,  1.26s/batch]\n";
    };
    // rev41: the analyzer measures (the failure's counter, the furthest later OOM's, the newest reading), the rule
    // evidence_oom_caught decides and judge_log applies its verdict.
    SUBCASE("later OOM lines two or more steps on (pytorch#31252): the newest counter, no failing step") {
        auto a = run(warn(1, "1.72") + warn(2, "1.68") + warn(4, "1.64") + warn(6, "1.69"));
        CHECK(a.step_basis != "oom_caught");  // no verdict in the parser
        CHECK(a.oom_counter_step == 1);
        CHECK(a.later_oom_step == 6);
        CHECK(a.newest_step == 6);
        REQUIRE(a.later_oom_line);
        CHECK(a.later_oom_line->line == 4);
        judge_log(a);
        CHECK(a.last_logged_step == 6);
        CHECK_FALSE(a.step);
        CHECK(a.step_basis == "oom_caught");
        CHECK(a.timing == "mid");
        CHECK(a.requested_bytes == static_cast<std::int64_t>(1.72 * 1024 * 1024 * 1024 + 0.5));
    }
    SUBCASE("one step on is the step in flight, redrawn after the message (PCAccumulation#5): not caught") {
        auto a = run(warn(283, "1.72") + warn(284, "1.68") + warn(284, "1.64"));
        CHECK(a.later_oom_step == 284);
        judge_log(a);
        CHECK(a.last_logged_step == 283);
        CHECK(a.step == 284);
        CHECK(a.step_basis != "oom_caught");
    }
    SUBCASE("one OOM, then the bar redrawn at the same count (CCSR#12): the next step failed") {
        auto a = run("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 3; 23.69 GiB "
                     "total capacity; 23.03 GiB already allocated; 21.69 MiB free; 23.19 GiB reserved in total by "
                     "PyTorch)\nEpoch 0:   0%|          | 2/35135 [00:29<144:16:07, 14.78s/it, loss=0.389, v_num=0]\n");
        CHECK(a.last_logged_step == 2);
        CHECK(a.step == 3);
    }
}

TEST_CASE("evaluation announced after the bar, the bar redrawn at the same count on the way out (logs64)") {
    const std::string bar100 = " 50%|#####     | 100/200 [01:41<01:36,  1.03it/s]";
    const std::string eval_bar = " 20%|##        | 1/5 [00:00<00:03,  1.24it/s]\n";
    const std::string redraw = " 50%|#####     | 100/200 [01:42<01:42,  1.02s/it]\n";
    const std::string oom = "Traceback (most recent call last):\n  File \"trainers.py\", line 127, in fit\n"
                            "    logits = self.model(xb)\n  File \"gpt.py\", line 79, in forward\n"
                            "    attention = Q @ K.transpose(2, 3)\ntorch.cuda.OutOfMemoryError: CUDA out of memory. "
                            "Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 14.58 GiB of which 52.50 MiB is "
                            "free.\n";
    SUBCASE("`start eval` glued after step 100's bar (MDS5210-23fall): the failure is in the evaluation after 100") {
        auto a = run(bar100 + "start eval\n" + eval_bar + redraw + oom);
        CHECK(a.last_logged_step == 100);
        CHECK(a.phase == "eval");
        CHECK(a.step == 100);
        CHECK(a.step_basis == "after_step_eval");
    }
    SUBCASE("the same redraw with no announcement: the next step failed") {
        auto a = run(bar100 + "\n" + redraw + oom);
        CHECK(a.last_logged_step == 100);
        CHECK(a.step == 101);
        CHECK(a.phase != "eval");
    }
    SUBCASE("the bar moved on after the announcement: that evaluation had ended, step 102 failed") {
        auto a = run(bar100 + "start eval\n" + eval_bar + " 50%|#####     | 101/200 [01:44<01:40,  1.03it/s]\n" + oom);
        CHECK(a.last_logged_step == 101);
        CHECK(a.step == 102);
        CHECK(a.phase != "eval");
    }
}
