// Checks of every numeric job fact once the config, model, device, --set pairs and the world
// size are all in: ranges (no zero, negative or absurdly large values) and the divisibility
// the frameworks themselves assert (TP divides the heads, the degrees multiply to the world
// size, EP divides the experts and its data-parallel group, PP no larger than the layers, CP
// divides the sequence). Where a framework rounds instead of failing, the rounding is stated
// as an assumption. Also derives the facts that follow from the settled layout.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "parsers/config/framework_adapter.h"

namespace oomdx {

class fact_store;

// Facts that follow from the others once all inputs are in: torchtitan's sharding stage
// (parallelism.zero_stage = 3 when dp_shard x cp > 1, else 0: DDP or no data parallelism).
void derive_job_facts(fact_store& facts);

// Throws usage_error on the first bad value: one line naming the key, the value and where it
// came from (--set, --world-size, file:line, the adapter default). Returns the assumptions
// stated where a framework rounds (also emitted as the fact job.assumptions).
std::vector<std::string> validate_job_facts(fact_store& facts);

// derive_job_facts then validate_job_facts: call after every input is in the store.
void finish_job_facts(fact_store& facts);

// Copies the facts that describe the job (config, model, device, framework semantics, environment,
// allocator settings) from a store that may also hold log and snapshot facts.
void copy_job_facts(const fact_store& all, fact_store& out);

// For a what-if: the error line the checks would give for the job's facts with these overrides
// on top (TP 2 on a DDP mesh that already uses every rank, ...), or nullopt when they pass.
std::optional<std::string> override_problem(const fact_store& facts, const std::vector<canonical_override>& overrides);

}  // namespace oomdx
