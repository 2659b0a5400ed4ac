// Everything a user says about a job before any log or snapshot: the config file, the model,
// the device and explicit key=value settings, gathered into facts with provenance.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/core/fact.h"
#include "parsers/config/device_catalog.h"
#include "parsers/config/framework_adapter.h"
#include "parsers/config/job_config.h"
#include "parsers/config/model_dims.h"
#include "parsers/config/override_syntax.h"

namespace oomdx {

struct job_inputs_options {
    std::string config;                 // config file ("" = none); "file.py:function" for a registry
    std::string framework;              // adapter name hint
    std::string model;                  // preset id or path ("" = from the config when it names one)
    std::string device;                 // catalog spelling, or a capacity such as "80GiB"
    std::vector<std::string> sets;      // "canonical.key=value" (user overrides, win over the config)
    std::vector<std::string> launch_args;  // extra CLI words (e.g. a launch line), parsed as overrides
    std::string launch_script;             // the script that line runs (job.entry_script)
};

struct job_inputs {
    std::optional<job_config> job;
    std::optional<model_dims> model;
    bool model_from_config = false;     // resolved from job.model_name / job.model_flavor
    std::optional<device_info> device;
    std::string device_source = "catalog";  // "user" when --device was a bare size ("80GiB")
    std::vector<fact> user;             // from --set
    override_syntax syntax;             // how overrides are written for this job (detected from the config)
};

// Throws input_error for unreadable inputs, usage_error for unknown names / bad --set.
job_inputs load_job_inputs(const job_inputs_options&);
void emit_facts(const job_inputs&, fact_sink&);
// After every input (and the world size) is in the store: derived facts, then the checks of
// parsers/config/job_validate.h (throws usage_error naming the key, the value and its origin).
// Fills the syntax's device kind from the facts.
void finish_job_inputs(job_inputs& in, fact_store& facts);

// "training.local_batch_size=2" -> a checked canonical override (vocabulary name and type).
canonical_override parse_set_override(const std::string& key_value);

}  // namespace oomdx
