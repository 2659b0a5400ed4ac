// Runs a real case through run_diagnosis() as a new user would (log, device, parallel sizes,
// micro-batch, model preset) and scores whether the confirmed fix ranks first / in the top 3.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "case_file.h"

namespace oomdx::cases {

struct case_result {
    std::string id, kind;
    std::vector<std::string> fix;
    std::vector<std::string> ranked;  // distinct recommendation actions, best first
    std::string error;                // run_diagnosis threw: the message (no ranking then)
    // Report defects a user would catch: contradicting rule pairs, and an override that sets a
    // key to the value the job already has (a no-op offered as a fix).
    std::vector<std::string> defects;
    bool hit(size_t k) const;         // any confirmed fix among the first k
};

// Writes the log under `scratch_dir` and runs the diagnosis.
case_result run_case(const test_case& tc, const std::string& scratch_dir);

struct tally {
    int cases = 0, top1 = 0, top3 = 0;
    void add(const case_result& r);
};

struct score {
    tally all;
    std::map<std::string, tally> by_kind;
};

score score_of(const std::vector<case_result>& results);

std::string result_line(const case_result& r);          // id, kind, fix, top-3, hit@1/hit@3
std::string totals_text(const score& s);                // "cases: N, top-1: X (P%), top-3: Y (Q%)" + per kind
std::string report_text(const std::vector<case_result>& results);  // lines + totals

// tests/cases/score_floor.yaml: {top1: N, top3: M}. Throws std::runtime_error naming the file.
struct floor_counts {
    int top1 = 0, top3 = 0;
};
floor_counts read_floor(const std::string& path);

}  // namespace oomdx::cases
