// Per-family tests of the log analyzer with our own fixtures.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/fact_store.h"
#include "engine/report/log_verdicts.h"
#include "parsers/log/log_analyzer.h"

using namespace oomdx;

namespace {

// The analysis with the verdicts of the evidence rules (timing, leak signal), as `oomdx log` prints it.
log_analysis run(const std::string& text) {
    log_analysis a = analyze_log_text(text, "t.log");
    judge_log(a);
    return a;
}

constexpr std::int64_t GiB = 1LL << 30, MiB = 1LL << 20;

bool near(std::optional<std::int64_t> got, double want, std::int64_t unit) {
    return got && std::llabs(*got - static_cast<std::int64_t>(want)) <= unit / 200 + 1;
}

}  // namespace

TEST_CASE("cuda: every message generation") {
    SUBCASE("2018 cached form") {
        auto a = run("RuntimeError: CUDA out of memory. Tried to allocate 16.00 GiB (GPU 0; 11.93 GiB total capacity; 4.00 GiB already allocated; 7.33 GiB free; 179.00 KiB cached)\n");
        CHECK(a.source == "caching_allocator");
        CHECK(a.device_kind == "cuda");
        CHECK(near(a.requested_bytes, 16.0 * GiB, GiB));
        CHECK(near(a.capacity_bytes, 11.93 * GiB, GiB));
        CHECK(near(a.reserved_unallocated_bytes, 179.0 * 1024, 1024));
        CHECK_FALSE(a.reserved_unallocated_derived);
        CHECK(a.device_index == 0);
        CHECK(a.line == 1);
    }
    SUBCASE("1.x reserved in total, with allowed") {
        auto a = run("RuntimeError: CUDA out of memory. Tried to allocate 376.00 MiB (GPU 2; 3.95 GiB total capacity; 1.72 GiB already allocated; 354.88 MiB free; 3.00 GiB allowed; 2.46 GiB reserved in total by PyTorch)\n");
        CHECK(a.source == "caching_allocator");
        CHECK(a.device_index == 2);
        CHECK(near(a.allowed_bytes, 3.0 * GiB, GiB));
        CHECK(near(a.reserved_bytes, 2.46 * GiB, GiB));
        CHECK(a.reserved_unallocated_derived);
        CHECK(*a.reserved_unallocated_bytes == *a.reserved_bytes - *a.allocated_bytes);
    }
    SUBCASE("2.1 capacty typo with co-tenant processes") {
        auto a = run("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 1 has a total capacty of 79.10 GiB of which 364.31 MiB is free. Process 175080 has 1.46 GiB memory in use. Process 175356 has 77.26 GiB memory in use. Of the allocated memory 72.12 GiB is allocated by PyTorch, and 3.78 GiB is reserved by PyTorch but unallocated.\n");
        CHECK(a.device_index == 1);
        CHECK(near(a.capacity_bytes, 79.10 * GiB, GiB));
        CHECK(near(a.process_in_use_bytes, 77.26 * GiB, GiB));
        CHECK(a.other_processes == 1);
        CHECK(near(a.non_pytorch_bytes, (77.26 - 72.12 - 3.78) * GiB, GiB));
    }
    SUBCASE("2.4 wording: this process named, a larger co-tenant beside it") {
        // the failing process's own figure wins over the larger other process (round 38, ar08)
        auto a = run("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 258.00 MiB. GPU 0 has a total capacity of 79.15 GiB of which 214.12 MiB is free. Process 3818882 has 51.68 GiB memory in use. Including non-PyTorch memory, this process has 27.25 GiB memory in use. Of the allocated memory 26.48 GiB is allocated by PyTorch, and 272.54 MiB is reserved by PyTorch but unallocated.\n");
        CHECK(near(a.process_in_use_bytes, 27.25 * GiB, GiB));
        CHECK(a.other_processes == 1);
        CHECK(near(a.non_pytorch_bytes, (27.25 - 26.48) * GiB - 272.54 * MiB, GiB));
        CHECK(near(a.other_processes_bytes, (79.15 - 27.25) * GiB - 214.12 * MiB, GiB));
    }
    SUBCASE("2.1 wording: every process by pid, the largest is the failing one") {
        auto a = run("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 11.06 MiB is free. Process 2270 has 3.02 GiB memory in use. Process 2281 has 20.61 GiB memory in use. Of the allocated memory 19.90 GiB is allocated by PyTorch, and 280.81 MiB is reserved by PyTorch but unallocated.\n");
        CHECK(near(a.process_in_use_bytes, 20.61 * GiB, GiB));
        CHECK(a.other_processes == 1);
    }
    SUBCASE("newest torch.OutOfMemoryError form, HIP, private pools") {
        auto a = run("[rank6]: torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 6 has a total capacity of 94.97 GiB of which 1.21 GiB is free. Including non-PyTorch memory, this process has 93.75 GiB memory in use. Of the allocated memory 91.23 GiB is allocated by PyTorch, with 2.00 GiB allocated in private pools (e.g., CUDA Graphs), and 1.40 GiB is reserved by PyTorch but unallocated.\n");
        CHECK(a.device_kind == "hip");
        CHECK(a.rank == 6);
        CHECK(a.rank_from == "prefix");
        CHECK(near(a.private_pool_bytes, 2.0 * GiB, GiB));
        CHECK(near(a.reserved_unallocated_bytes, 1.40 * GiB, GiB));
    }
    SUBCASE("more than 1EB has no size") {
        auto a = run("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory\n");
        CHECK(a.source == "caching_allocator");
        CHECK_FALSE(a.requested_bytes);
    }
    SUBCASE("driver / kernel and cuBLAS / cuDNN") {
        CHECK(run("RuntimeError: CUDA error: out of memory\n").source == "driver_or_kernel");
        CHECK(run("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n").source == "cublas_cudnn_workspace");
        CHECK(run("RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED\n").source == "cublas_cudnn_workspace");
    }
}

TEST_CASE("npu, hccl, nccl, host") {
    SUBCASE("npu caching allocator with active and allowed") {
        auto a = run("RuntimeError: NPU out of memory. Tried to allocate 48.78 GiB (NPU 0; 60.96 GiB total capacity; 13.22 GiB already allocated; 13.22 GiB current active; 40.54 GiB free; 54.86 GiB allowed; 13.86 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.\n");
        CHECK(a.source == "caching_allocator");
        CHECK(a.device_kind == "npu");
        CHECK(near(a.active_bytes, 13.22 * GiB, GiB));
        CHECK(near(a.allowed_bytes, 54.86 * GiB, GiB));
        CHECK(a.reserved_unallocated_derived);
    }
    SUBCASE("npu workspace; RankID:-1 is not a rank") {
        auto a = run("NPU out of memory. NPUWorkspaceAllocator tried to allocate 180.00 MiB(NPU 3; 60.96 GiB total capacity; 89.51 MiB free). If you want to reduce memory usage, take a try to set the environment variable TASK_QUEUE_ENABLE=1.\n[ERROR] 2026-01-07-02:38:42 (PID:1692557, Device:3, RankID:-1) ERR00006 PTA memory error\n");
        CHECK(a.source == "workspace");
        CHECK(a.device_index == 3);
        CHECK(near(a.requested_bytes, 180.0 * MiB, MiB));
        CHECK_FALSE(a.rank);
    }
    SUBCASE("EL0004 raised by HCCL resource allocation") {
        auto a = run("[rank2]: RuntimeError: NPU function error: call aclnnFoo failed, error code is 207001\n[ERROR] 2025-09-28-07:22:30 (PID:3, Device:2, RankID:-1) ERR00100 PTA call acl api failed\nEL0004: [PID: 3] 2025-09-28-07:22:29.827.496 Failed to allocate memory.\n        Failed to allocate resource[DeviceMemory] with info [size:1073741824]. Reason: Memory resources are exhausted.\n        Nnopbase fails to invoke the HcclAllocComResourceByTiling function of the hccl module. ret = 2\n");
        CHECK(a.source == "hccl");
        CHECK(a.rank == 2);
        CHECK(a.device_index == 2);
        CHECK(a.requested_bytes == GiB);
        CHECK(a.error_code == "207001");
    }
    SUBCASE("HCCL memory code vs other codes") {
        CHECK(run("RuntimeError: HcclAllReduce:foo.cpp:1 HCCL function error: HcclAllReduce(...), error code is 3\n").source == "hccl");
        auto b = run("[rank1]: RuntimeError: create_config:x:102 HCCL function error: hcclCommInitRootInfoConfig(...), error code is 15\n");
        CHECK(b.source == "none");
        CHECK(b.failure_kind == "not_oom");
        CHECK(b.rank == 1);
    }
    SUBCASE("NCCL: bracket is a device; pid maps to a rank") {
        auto a = run("h:77:80 [1] NCCL INFO Channel 00/0 : 5[1] -> 6[2] via P2P/IPC\nh:77:81 [1] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'\nh:77:81 [1] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes\n");
        CHECK(a.source == "nccl");
        CHECK(a.device_index == 1);
        CHECK(a.rank == 5);
        CHECK(a.rank_from == "nccl");
        CHECK(a.requested_bytes == 6291456);
        CHECK(run("[rank0]: ncclUnhandledCudaError: Call to CUDA function failed.\n[rank0]: Cuda failure 999 'unknown error'\n").source == "none");
    }
    SUBCASE("host memory") {
        auto a = run("RuntimeError: [enforce fail at alloc_cpu.cpp:81] data. DefaultCPUAllocator: not enough memory: you tried to allocate 1981808640 bytes.\n");
        CHECK(a.source == "host_oom");
        CHECK(a.requested_bytes == 1981808640);
        CHECK(run("Memory cgroup out of memory: Killed process 629 (python) total-vm:14119556kB\n").source == "host_oom");
        CHECK(run("    exitcode  : -9 (pid: 1234)\n    traceback : Signal 9 (SIGKILL) received by PID 1234\n").source == "host_oom");
        CHECK(run("Process finished with exit code 137 (interrupted by signal 9:SIGKILL)\n").source == "host_oom");
        CHECK(run("terminate called after throwing an instance of 'std::bad_alloc'\n").source == "host_oom");
    }
}

TEST_CASE("look-alikes are not OOMs") {
    CHECK(run("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 49152.\n").source == "none");
    CHECK(run("RuntimeError: CUDA error: an illegal memory access was encountered\n").source == "none");
    CHECK(run("INFO memory usage is fine; free memory 3 GiB; out of curiosity we print this\n").source == "none");
    CHECK(run("Get a block from the existing pool failed. Try to free cached blocks and reallocate. This error log can be ignored.\n").source == "none");
    auto v = run("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\nValueError: bad shape\n");
    CHECK(v.source == "none");
    CHECK(v.failure_kind == "not_oom");
    auto c = run("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n");
    CHECK(c.source == "unknown_oom");
    CHECK(c.failure_kind == "crash");
}

TEST_CASE("steps, timing (rules/evidence_log.yaml), tqdm and \\r") {
    SUBCASE("tqdm redraws split at \\r; OOM in the next step") {
        auto a = run(" 10%|#  | 10/100 [00:10<01:30,  1.00it/s]\r 11%|#  | 11/100 [00:11<01:29,  1.00it/s]Traceback (most recent call last):\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB total capacity; 1.24 GiB already allocated; 2.88 MiB free; 1.25 GiB reserved in total by PyTorch)\n");
        CHECK(a.last_logged_step == 11);
        CHECK(a.step == 12);
        CHECK(a.timing == "late");
    }
    SUBCASE("first step") {
        auto a = run("  0%|          | 0/64 [00:00<?, ?it/s]\nRuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB total capacity; 1.24 GiB already allocated; 2.88 MiB free; 1.25 GiB reserved in total by PyTorch)\n");
        CHECK(a.step == 1);
        CHECK(a.timing == "early");
    }
    SUBCASE("eval and checkpoint phases") {
        auto a = run("step 100, loss 1.0\nTraceback (most recent call last):\n  File \"trainer.py\", line 10, in evaluate\n    out = model(x)\nRuntimeError: CUDA error: out of memory\n");
        CHECK(a.timing == "eval");
        auto b = run("step 100, loss 1.0\nTraceback (most recent call last):\n  File \"megatron/training/checkpointing.py\", line 10, in save_checkpoint\nRuntimeError: CUDA error: out of memory\n");
        CHECK(b.timing == "checkpoint");
    }
    SUBCASE("a report signature states its log.* fact with the line as provenance") {
        auto a = run("CUDA out of memory\nI was able to successfully run your GRPO training. Now I run it on a custom dataset and it fails at step 4\n");
        REQUIRE(a.reports.count("log.ran_before_reported") == 1);
        CHECK(a.reports.at("log.ran_before_reported").line == 2);
        bool ev = false;
        for (const auto& e : a.evidence) ev = ev || (e.role == "report" && e.line == 2);
        CHECK(ev);
        // a question is not a report (look-alike)
        auto b = run("CUDA out of memory\nHas anyone been able to run the training on a 24 GB card?\n");
        CHECK(b.reports.empty());
    }
    SUBCASE("memory growth reported in words, no step logged: late (a suspected leak)") {
        auto a = run("Out of memory in training\nmy GPU memory keeps increasing every epoch until it crashes\n");
        CHECK(a.growth_report_lines == 1);
        CHECK(a.timing == "late");
        bool ev = false;
        for (const auto& e : a.evidence) ev = ev || (e.role == "growth" && e.line == 2);
        CHECK(ev);  // the fact's provenance: the line that says it
        // a logged step decides (look-alike): step 1 is early whatever the words say
        auto b = run("step 1, loss 2.0\nmy GPU memory keeps increasing every epoch\nRuntimeError: CUDA error: out of memory\n");
        CHECK(b.timing != "late");
        // a guess is not a report (look-alike)
        auto c = run("Out of memory in training\nis there some kind of memory leak?\n");
        CHECK(c.growth_report_lines == 0);
        CHECK(c.timing == "unknown");
    }
    SUBCASE("Lightning's epoch bar that keeps counting validation batches after Validating starts") {
        const std::string head =
            "Epoch 1:  84% 5246/6231 [18:06<03:24,  4.82it/s, loss=1.859, v_num=16]\n"
            "Epoch 1:  84% 5247/6231 [18:08<03:24,  4.82it/s, loss=1.859, v_num=16]\n";
        const std::string oom =
            "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 11.17 GiB total capacity; 8.10 GiB "
            "already allocated; 1.20 GiB free; 9.50 GiB reserved in total by PyTorch)\n";
        // the same bar ticks on after the validation bar starts: validation batches, the OOM is in evaluation
        auto a = run(head + "Validating: 0it [00:00, ?it/s]\n" +
                     "Epoch 1:  84% 5248/6231 [18:10<03:24,  4.81it/s, loss=1.859, v_num=16]\n" +
                     "Epoch 1:  84% 5249/6231 [18:11<03:24,  4.81it/s, loss=1.859, v_num=16]\n" + oom);
        CHECK(a.phase == "eval");
        CHECK(a.timing == "eval");
        CHECK(a.last_logged_step == 5247);
        // look-alike: the bar restarted in a new epoch after validation - training again
        auto b = run(head + "Validating: 0it [00:00, ?it/s]\n" +
                     "Epoch 2:   0% 3/6231 [00:01<30:00,  3.40it/s, loss=1.801, v_num=16]\n" +
                     "Epoch 2:   0% 4/6231 [00:01<30:00,  3.40it/s, loss=1.801, v_num=16]\n" + oom);
        CHECK(b.phase != "eval");
        // look-alike: a training bar that is not Lightning's epoch bar keeps its steps
        auto c = run("  52%|#####     | 520/1000 [10:00<10:00,  1.00it/s]\nValidating: 0it [00:00, ?it/s]\n"
                     "  52%|#####     | 521/1000 [10:01<10:00,  1.00it/s]\n" + oom);
        CHECK(c.phase != "eval");
    }
    SUBCASE("a phase line matched late (log_scanner.h, pending_phase): later literal hits that do not match") {
        const std::string tb = "Traceback (most recent call last):\n  File \"model.py\", line 10, in forward\n    x = self.fc(x)";
        const std::string oom = "RuntimeError: CUDA error: out of memory\n";
        std::string later, rewrites;
        for (int i = 0; i < 30; ++i) later += "note " + std::to_string(i) + ": forwarded\n";
        for (int i = 0; i < 80; ++i) rewrites += "\rforwarded " + std::to_string(i);  // more than the window's ring
        CHECK(run(tb + "\n" + later + oom).phase == "forward");
        CHECK(run(tb + rewrites + "\n" + oom).phase == "forward");
        std::string far = "step 1\n" + tb + "\n";
        for (int i = 0; i < 70; ++i) far += "x" + std::to_string(i) + "\n";
        CHECK(run(far + "forwarded\n" + oom).phase.empty());  // the frame is past the window (60 lines)
    }
    SUBCASE("the evaluation frame's source path: the frame above the code line, or the frame itself") {
        struct example {
            const char* what;
            std::string text;
            std::string path;         // oom.phase_frame_path ("" = none)
            std::int64_t frame_line;  // its provenance line (0 = not checked)
            std::string site;         // oom.eval_loop_site ("" = none)
        };
        const std::string oom = "RuntimeError: CUDA error: out of memory\n";
        const std::vector<example> examples = {
            {"OpenNMT-py: the code line under the frame calls validate(); its frame is in onmt/",
             "Traceback (most recent call last):\n  File \"../OpenNMT-py/train.py\", line 120, in <module>\n    main(opt)\n"
             "  File \"/home/u/OpenNMT-py/onmt/trainer.py\", line 190, in train\n    valid_stats = self.validate(valid_iter)\n" + oom,
             "/home/u/OpenNMT-py/onmt/trainer.py", 4, "framework"},
            {"the entry script's own validate() frame",
             "Traceback (most recent call last):\n  File \"train.py\", line 127, in main\n    criterion=criterion)\n"
             "  File \"train.py\", line 282, in validate\n    scores_copy = scores.clone()\n" + oom,
             "train.py", 0, "user"},
            {"an IPython traceback: the numbered code line a few lines under its frame",
             "OutOfMemoryError                          Traceback (most recent call last)\n"
             "File /usr/local/lib/python3.8/dist-packages/transformers/trainer.py:2113, in Trainer.evaluate(self)\n"
             "   2110 start_time = time.time()\n-> 2113 output = eval_loop(\n"
             "OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB total capacity; 1.24 GiB "
             "already allocated; 2.88 MiB free; 1.25 GiB reserved in total by PyTorch)\n",
             "/usr/local/lib/python3.8/dist-packages/transformers/trainer.py", 0, "framework"},
            // the frame lines are parsed only when a context phase asks (log_scanner.h, frame_line)
            {"a frame line that does not parse is passed over for the newest one that does",
             "OutOfMemoryError                          Traceback (most recent call last)\n"
             "File /usr/local/lib/python3.8/dist-packages/transformers/trainer.py:2113, in Trainer.evaluate(self)\n"
             "  File \"<frozen importlib._bootstrap\n-> 2113 output = eval_loop(\n" + oom,
             "/usr/local/lib/python3.8/dist-packages/transformers/trainer.py", 2, "framework"},
            {"more frame lines than the ring holds on one line (\\r rewrites): the one that parses still counts",
             "Traceback (most recent call last):\n  File \"/home/u/OpenNMT-py/onmt/trainer.py\", line 190, in train" +
                 [] {
                     std::string r;
                     for (int i = 0; i < 20; ++i) r += "\r  File \"<frozen";
                     return r;
                 }() +
                 "\n    valid_stats = self.validate(valid_iter)\n" + oom,
             "/home/u/OpenNMT-py/onmt/trainer.py", 2, "framework"},
            {"a phase from a header line far from any frame keeps no path, and gives no site",
             "  File \"train.py\", line 10, in main\n    run()\nstep 5, loss 1.0\n***** Running Evaluation *****\n" + oom, "", 0,
             ""},
        };
        for (const auto& ex : examples) {
            CAPTURE(ex.what);
            log_analysis a = analyze_log_text(ex.text, "t.log");
            const fact_store f = judge_log(a);
            CHECK(a.phase == "eval");
            CHECK(a.phase_frame_path == ex.path);
            const fact* path = f.get("oom.phase_frame_path");
            CHECK((path != nullptr) == !ex.path.empty());
            if (path && ex.frame_line) CHECK(path->prov.line == ex.frame_line);  // the frame line, not the code line
            const fact* site = f.get("oom.eval_loop_site");
            CHECK((site ? site->val.as_string() : std::string()) == ex.site);
        }
    }
    SUBCASE("log.framework cites the first line that named the chosen framework") {
        log_analysis a = analyze_log_text(
            "starting\n[titan] 2026-01-01 00:00:00,000 - root - INFO - step:  1  loss: 9.1  memory: 40.00GiB(50.00%)\n"
            "[titan] 2026-01-01 00:00:01,000 - root - INFO - step:  2  loss: 8.9  memory: 41.00GiB(51.00%)\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n",
            "t.log");
        const fact_store f = judge_log(a);
        const fact* fw = f.get("log.framework");
        REQUIRE(fw != nullptr);
        CHECK(fw->val.as_string() == "torchtitan");
        CHECK(fw->prov.line == 2);  // not the OOM line (4)
        // look-alike: no framework named, the fact keeps the log's own provenance and no framework line
        log_analysis b = analyze_log_text("epoch 1\nRuntimeError: CUDA error: out of memory\n", "t.log");
        for (const auto& e : b.evidence) CHECK(e.role != "framework");
    }
    SUBCASE("init: no step before the failure") {
        auto a = run("Loading checkpoint shards:   0%|          | 0/7 [00:00<?, ?it/s]\nLoading model weights\nRuntimeError: CUDA error: out of memory\n");
        CHECK(a.timing == "init");  // a loading bar is not a training step
    }
}
