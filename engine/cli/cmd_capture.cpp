// `oomdx capture`: print the minimal snapshot-capture code of the method for CUDA or NPU.
#include <fmt/format.h>

#include "engine/cli/commands.h"

namespace oomdx::cli {

namespace {

struct capture_options {
    std::string device = "cuda";
    bool on_oom = false;
    bool leak_pair = false;
    int max_entries = 100000;
    std::string out_dir = "memory_snapshot";
};

std::string capture_code(const capture_options& o) {
    const bool npu = o.device == "npu";
    const std::string mod = npu ? "torch.npu" : "torch.cuda";
    std::string s;
    s += "# Memory snapshot capture (oomdx capture";
    s += fmt::format(" --device {}{}{})\n", o.device, o.on_oom ? " --on-oom" : "", o.leak_pair ? " --leak-pair" : "");
    s += "# Add to the training entry point before the model is built. Analyze with:\n";
    s += "#   oomdx snapshot <file>   or   oomdx diagnose --log train.log --snapshot <file>\n";
    s += "import os\nimport torch\n";
    if (npu) s += "import torch_npu  # noqa: F401  registers torch.npu\n";
    s += fmt::format("\nSNAPSHOT_DIR = os.environ.get(\"OOMDX_SNAPSHOT_DIR\", \"{}\")\n", o.out_dir);
    s += "os.makedirs(SNAPSHOT_DIR, exist_ok=True)\n";
    s += "RANK = int(os.environ.get(\"RANK\", \"0\"))\n\n";
    s += "# Record allocation history with stacks; max_entries bounds the ring buffer (and the file size).\n";
    s += fmt::format("{}.memory._record_memory_history(max_entries={})\n\n", mod, o.max_entries);
    s += "\ndef dump_snapshot(tag):\n";
    s += "    path = os.path.join(SNAPSHOT_DIR, f\"rank{RANK}_{tag}.pickle\")\n";
    s += fmt::format("    {}.memory._dump_snapshot(path)\n", mod);
    s += "    return path\n";
    if (o.on_oom) {
        // Each rank summarizes its own snapshot where it lives (docs/scale.md): thousands of ranks
        // leave kilobyte summaries in one folder, merged by `oomdx snapshot merge`.
        s += "\n\n# Summarize this rank's snapshot where it was written (docs/scale.md); merge all ranks with:\n";
        s += "#   oomdx snapshot merge $OOMDX_SUMMARY_DIR --world-size N\n";
        s += "OOMDX = os.environ.get(\"OOMDX\", \"oomdx\")\n";
        s += "SUMMARY_DIR = os.environ.get(\"OOMDX_SUMMARY_DIR\", SNAPSHOT_DIR)\n\n\n";
        s += "def summarize(path):\n";
        s += "    import subprocess\n";
        s += "    out = os.path.join(SUMMARY_DIR, os.path.basename(path) + \".json\")\n";
        s += "    try:\n";
        s += "        os.makedirs(SUMMARY_DIR, exist_ok=True)\n";
        s += "        subprocess.run([OOMDX, \"snapshot\", path, \"--format\", \"json\", \"--rank\", str(RANK), \"--output\", out],\n";
        s += "                       check=False, timeout=900)\n";
        s += "    except (OSError, subprocess.SubprocessError) as e:  # the job's own error matters more\n";
        s += "        print(f\"oomdx: no summary of {path}: {e}\")\n";
        if (npu) {
            s += "\n\n# torch_npu has no OOM observer hook: dump from the exception handler around the step.\n";
            s += "def run_step_with_oom_dump(step_fn, *args, **kwargs):\n";
            s += "    try:\n";
            s += "        return step_fn(*args, **kwargs)\n";
            s += "    except RuntimeError as e:\n";
            s += "        if \"out of memory\" in str(e).lower():\n";
            s += "            summarize(dump_snapshot(\"oom\"))\n";
            s += "        raise\n";
        } else {
            s += "\n\n# Dump automatically when the caching allocator runs out of memory.\n";
            s += "def _oom_observer(device, alloc, device_alloc, device_free):\n";
            s += "    summarize(dump_snapshot(\"oom\"))\n";
            s += "\n\ntorch._C._cuda_attach_out_of_memory_observer(_oom_observer)\n";
        }
    }
    if (o.leak_pair) {
        s += "\n\n# Leak check: dump at the same point of several steps (after optimizer.step()),\n";
        s += "# then: oomdx snapshot trend rank0_step5.pickle rank0_step10.pickle rank0_step20.pickle\n";
        s += "LEAK_CHECK_STEPS = {5, 10, 20}\n\n\n";
        s += "def maybe_dump_for_leak_check(step):\n";
        s += "    if step in LEAK_CHECK_STEPS:\n";
        s += "        dump_snapshot(f\"step{step}\")\n";
    }
    s += "\n\n# To stop recording (for example after the dumps you need):\n";
    s += fmt::format("# {}.memory._record_memory_history(enabled=None)\n", mod);
    return s;
}

}  // namespace

void add_capture_command(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<capture_options>();
    auto* cmd = app.add_subcommand("capture", "Print the code that captures allocator memory snapshots");
    cmd->add_option("--device", o->device, "cuda or npu")->check(CLI::IsMember({"cuda", "npu", "hip"}));
    cmd->add_flag("--on-oom", o->on_oom, "Dump a snapshot when the OOM happens");
    cmd->add_flag("--leak-pair", o->leak_pair, "Dump at the same point of several steps to check for a leak");
    cmd->add_option("--max-entries", o->max_entries, "History ring-buffer size")->check(CLI::Range(1000, 100000000));
    cmd->add_option("--dir", o->out_dir, "Folder for the snapshot files");
    cmd->callback([o, &exit_code] {
        if (o->device == "hip") o->device = "cuda";  // ROCm builds expose torch.cuda
        fmt::print("{}", capture_code(*o));
        exit_code = 0;
    });
}

}  // namespace oomdx::cli
