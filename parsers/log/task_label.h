// Slurm's `srun -l` (--label) puts the task number before every line a task prints: "%*d: "
// (right-aligned to the widest task number: " 3: ", "12: "; Slurm srun(1), -l). The task number
// is SLURM_PROCID, the rank when srun starts one process per device. A line alone cannot tell
// it from an ordinary "3: foo", so a file counts as labelled only when its lines carry the
// label consistently (task_label_vote); Slurm's own lines ("srun: ...", "slurmstepd: ...") are
// never labelled and do not vote.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace oomdx {

// The task number a line starts with ("  3: ..."), -1 when none.
inline std::int64_t task_label(std::string_view s) {
    size_t i = 0;
    while (i < s.size() && i < 6 && s[i] == ' ') ++i;
    const size_t start = i;
    std::int64_t v = 0;
    while (i < s.size() && i - start < 6 && s[i] >= '0' && s[i] <= '9') v = v * 10 + (s[i++] - '0');
    if (i == start || i - start > 5 || i >= s.size() || s[i] != ':') return -1;
    if (i + 1 < s.size() && s[i + 1] != ' ') return -1;  // "12:30:01" is a time, not a label
    return v;
}

// Slurm's own messages in a job's output: never labelled.
inline bool slurm_own_line(std::string_view s) {
    return s.starts_with("srun: ") || s.starts_with("slurmstepd: ");
}

// The lines of one file: labelled when at least k_min carry a label and 9 in 10 do (the batch
// script's own output before srun may be unlabelled). A task that runs torchrun (or another
// torch.distributed launcher) prints the output of all its workers under one label, the node's:
// then the label is no rank.
struct task_label_vote {
    static constexpr std::int64_t k_min = 3;
    std::int64_t labelled = 0, unlabelled = 0;
    bool launcher = false;  // a labelled line names torchrun / torch.distributed's launcher
    void add(std::string_view line) {
        // neither a label (spaces, digits) nor Slurm's own line ("s"): most lines, at the first byte
        // (inline: a call per hit line cost more than the test)
        if (line.empty() || !(line[0] == ' ' || line[0] == 's' || (line[0] >= '0' && line[0] <= '9'))) {
            ++unlabelled;
            return;
        }
        add_candidate(line);
    }
    [[gnu::noinline]] void add_candidate(std::string_view line) {
        if (slurm_own_line(line)) return;
        if (task_label(line) < 0) {
            ++unlabelled;
            return;
        }
        ++labelled;
        if (launcher) return;
        for (std::string_view w : {"torchrun", "torch.distributed.run", "torch.distributed.launch",
                                   "torch.distributed.elastic"})
            if (line.find(w) != std::string_view::npos) launcher = true;
    }
    bool consistent() const { return labelled >= k_min && labelled >= 9 * unlabelled && !launcher; }
};

}  // namespace oomdx
