// Log signatures tested as data: the labelled example lines in the `*.test.yaml` file beside
// each signature file, run by `oomdx log test`, with a coverage gate (a signature without a
// matching example, or with a regex and no refused look-alike, fails).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "parsers/log/log_signatures.h"

namespace oomdx {

struct signature_example {
    std::string file;
    int line = 0;
    std::string sig;                            // the signature id the example is about
    std::string text;                           // one log line
    bool match = true;                          // false: a look-alike the signature must refuse
    bool wins = true;                           // failure kinds: the line's chosen failure is this signature
    std::map<std::string, std::string> fields;  // field -> expected value ("2.00 GiB", "3", "EL0004")
    std::string from;                           // where the line was seen (URL)
    std::string sets;                           // settings: the canonical value the line gives ("" = none expected)
    std::string count;  // a parameter count's setting: the count read ("6,738,415,616", "217,000,000 rounded, 3 digits")
};

struct example_report {
    int signatures = 0, examples = 0, passed = 0;
    std::vector<std::string> failures;  // "file:line: sig: what went wrong"
    std::vector<std::string> uncovered;  // coverage gate: "file:line: sig: no ... example"
    bool ok() const { return failures.empty() && uncovered.empty(); }
};

// Reads every *.test.yaml in the directories. Throws one input_error listing every error (bad
// YAML, unknown keys, unknown signature ids or field names), each naming file:line.
std::vector<signature_example> load_signature_examples(const std::vector<std::string>& dirs,
                                                       const signature_set& sigs);

// Runs every example on its own line through the prefilter, the pattern and the field
// extraction, then checks that every signature is covered.
example_report run_signature_examples(const signature_set& sigs, const std::vector<signature_example>& examples);

}  // namespace oomdx
