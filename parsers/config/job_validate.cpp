// Job checks: ranges of every numeric fact, then the divisibility each framework asserts
// (torchtitan parallel_dims.py _validate, Megatron arguments.py, DeepSpeed batch config).
#include "parsers/config/job_validate.h"

#include <cmath>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "engine/core/expert_tp.h"
#include "engine/core/fact_store.h"
#include "parsers/config/alloc_conf.h"
#include "parsers/config/framework_adapter.h"
#include "parsers/config/framework_semantics.h"

namespace oomdx {

namespace {

constexpr std::int64_t k_big = std::int64_t(1) << 24;

struct int_range {
    const char* name;
    std::int64_t lo, hi;
    bool minus_one = false;  // -1 is the framework's "the rest" / "derived"
};

// Bounds: positive, and far beyond any real job (the estimator's own clamps), so that a typo
// such as seq_len=99999999999 is refused instead of silently clamped.
const int_range k_int_ranges[] = {
    {"training.local_batch_size", 1, 1 << 20},
    {"training.seq_len", 1, std::int64_t(1) << 26},
    {"training.global_batch_size", 1, std::int64_t(1) << 40, true},
    {"training.gradient_accumulation_steps", 1, k_big},
    {"training.tokens_per_microbatch", 1, std::int64_t(1) << 40},
    {"training.max_tokens_per_device", 1, std::int64_t(1) << 40},
    {"training.lora_rank", 0, 1 << 20},  // 0: LoRA off (OpenRLHF, ColossalAI Chat --lora_rank 0)
    {"parallelism.tensor_parallel_degree", 1, k_big},
    {"parallelism.pipeline_parallel_degree", 1, k_big},
    {"parallelism.context_parallel_degree", 1, k_big},
    {"parallelism.expert_parallel_degree", 1, k_big},
    {"parallelism.expert_tensor_parallel_degree", 1, k_big},
    {"parallelism.virtual_pipeline_degree", 1, 1 << 16},
    {"parallelism.pipeline_parallel_microbatch_size", 1, 1 << 20},
    {"parallelism.data_parallel_replicate_degree", 1, k_big},
    {"parallelism.data_parallel_shard_degree", 1, k_big, true},
    {"parallelism.zero_stage", 0, 3},
    {"activation_checkpoint.recompute_num_layers", 1, 1 << 20},
    {"optimizer.swap_optimizer_times", 1, 1 << 20},
    {"job.world_size", 1, k_big},
    {"job.nproc_per_node", 1, 1 << 16},
    {"job.nnodes", 1, 1 << 20},
    {"env.HCCL_BUFFSIZE", 1, k_big},
    {"env.NCCL_BUFFSIZE", 1, std::int64_t(1) << 40},
    {"device.capacity_bytes", 1, std::int64_t(1) << 50},
    {"model.hidden_size", 1, 1 << 20},
    {"model.num_layers", 1, 100000},
    {"model.num_attention_heads", 1, 1 << 16},
    {"model.num_kv_heads", 0, 1 << 16},
    {"model.head_dim", 0, 1 << 16},
    {"model.intermediate_size", 0, k_big},
    {"model.vocab_size", 1, std::int64_t(1) << 28},
    {"model.num_experts", 0, 1 << 20},
    {"model.num_experts_per_tok", 0, 1 << 20},
    {"model.moe_intermediate_size", 0, k_big},
};

struct num_range {
    const char* name;
    double lo, hi;
    bool lo_open;
};

const num_range k_num_ranges[] = {
    {"training.torch_npu_memory_ratio", 0.0, 1.0, true},
    {"training.memory_fraction", 0.0, 1.0, true},
    {"model.dropout", 0.0, 1.0, false},
};

// Where a fact came from, for the error line.
std::string origin(const fact& f) {
    const provenance& p = f.prov;
    if (p.excerpt.rfind("--", 0) == 0) return p.excerpt;
    if (p.from_default())
        return fmt::format("the {} default", p.producer.substr(7, p.producer.size() - 15));
    if (!p.file.empty() && p.line > 0) return fmt::format("{}:{}", p.file, p.line);
    if (!p.file.empty()) return p.file;
    if (!p.excerpt.empty()) return p.excerpt;
    return p.producer;
}

[[noreturn]] void fail(const fact& f, const std::string& why) {
    throw usage_error(fmt::format("{} = {} ({}): {}", f.name, value_key(f.val), origin(f), why));
}

struct layout {
    const fact_store& f;
    std::string fw;
    bool titan = false, megatron = false, deepspeed = false;

    const fact* get(const char* n) const { return f.get(n); }
    std::int64_t deg(const char* n, std::int64_t def = 1) const {
        const fact* x = f.get(n);
        return x && x->val.is_integer() ? x->val.as_integer() : def;
    }
    std::optional<std::int64_t> opt(const char* n) const {
        const fact* x = f.get(n);
        if (x && x->val.is_integer()) return x->val.as_integer();
        return std::nullopt;
    }
};

// The framework's estimator conventions (its adapter's semantics), else its name.
layout read_layout(const fact_store& facts) {
    layout l{facts, facts.string("job.framework").value_or("torchtitan")};
    std::string conv = l.fw;
    if (auto e = facts.string("framework.estimator")) conv = *e;
    else if (const framework_semantics* s = find_semantics(l.fw); s && !s->estimator.empty()) conv = s->estimator;
    l.titan = conv.rfind("torchtitan", 0) == 0 || conv == "torchtune";
    l.megatron = conv == "megatron" || conv == "mindspeed";
    l.deepspeed = conv == "deepspeed";
    return l;
}

// dp_shard after torchtitan resolves -1 ("the remaining ranks"); nullopt when unknown.
std::optional<std::int64_t> resolved_shard(const layout& l) {
    const auto shard = l.opt("parallelism.data_parallel_shard_degree");
    if (shard && *shard > 0) return shard;
    const auto world = l.opt("job.world_size");
    if (!world) return std::nullopt;
    const std::int64_t rest = l.deg("parallelism.data_parallel_replicate_degree") *
                              l.deg("parallelism.tensor_parallel_degree") *
                              l.deg("parallelism.pipeline_parallel_degree") * l.deg("parallelism.context_parallel_degree");
    if (rest <= 0 || *world % rest != 0) return std::nullopt;
    return *world / rest;
}

void check_ranges(const fact_store& facts) {
    for (const auto& r : k_int_ranges) {
        const fact* x = facts.get(r.name);
        if (!x) continue;
        if (!x->val.is_integer()) fail(*x, "expected a whole number");
        const std::int64_t v = x->val.as_integer();
        if (r.minus_one && v == -1) continue;
        if (v < r.lo)
            fail(*x, r.lo == 1 ? std::string(r.minus_one ? "must be at least 1 (or -1)" : "must be at least 1")
                               : fmt::format("must be at least {}", r.lo));
        if (v > r.hi) fail(*x, fmt::format("larger than {}, beyond any job oomdx can estimate", r.hi));
    }
    for (const auto& r : k_num_ranges) {
        const fact* x = facts.get(r.name);
        if (!x) continue;
        if (!x->val.is_numeric()) fail(*x, "expected a number");
        const double v = x->val.as_number();
        if (!std::isfinite(v) || v > r.hi || v < r.lo || (r.lo_open && v <= r.lo))
            fail(*x, fmt::format("must be in {}{}, {}]", r.lo_open ? "(" : "[", r.lo, r.hi));
    }
}

}  // namespace

void derive_job_facts(fact_store& facts) {
    const layout l = read_layout(facts);
    if (!l.titan) return;
    // No framework named: torchtitan is only assumed. Without a torchtitan knob stated (dp_shard /
    // dp_replicate) nothing says how the job shards, and an assumed FSDP is not a fact the rules
    // may read ("I am not using FSDP" would meet a derived stage 3); the estimate makes its own
    // assumption and says so.
    if (!facts.string("job.framework") && !facts.get("parallelism.data_parallel_shard_degree") &&
        !facts.get("parallelism.data_parallel_replicate_degree"))
        return;
    // A ZeRO stage already stated (by the user or a launch flag) names DeepSpeed sharding, which the
    // torchtitan derivation must not overwrite.
    if (const fact* z = facts.get("parallelism.zero_stage");
        z && z->prov.producer != "config.derived" && !facts.string("job.framework"))
        return;
    // torchtitan applies FSDP exactly when dp_shard x cp > 1 (parallel_dims.fsdp_enabled); a
    // replicate-only mesh is DDP. There is no ZeRO knob to read.
    const auto shard = resolved_shard(l);
    if (!shard) return;
    const std::int64_t cp = l.deg("parallelism.context_parallel_degree");
    const std::int64_t n = *shard * cp;
    provenance p;
    p.producer = "config.derived";
    if (const fact* s = facts.get("parallelism.data_parallel_shard_degree")) {
        p.file = s->prov.file;
        p.line = s->prov.line;
    }
    p.excerpt = n > 1 ? fmt::format("torchtitan FSDP over dp_shard {} x cp {} = {} ranks", *shard, cp, n)
                      : fmt::format("torchtitan with dp_shard {} x cp {} = 1: no sharding (DDP over dp_replicate {})",
                                    *shard, cp, l.deg("parallelism.data_parallel_replicate_degree"));
    p.derived_from = {"parallelism.data_parallel_shard_degree", "parallelism.data_parallel_replicate_degree",
                      "parallelism.context_parallel_degree", "job.world_size"};
    facts.emit("parallelism.zero_stage", value(std::int64_t(n > 1 ? 3 : 0)), p);
}

std::vector<std::string> validate_job_facts(fact_store& facts) {
    check_ranges(facts);
    const layout l = read_layout(facts);
    std::vector<std::string> assumptions;
    const std::int64_t tp = l.deg("parallelism.tensor_parallel_degree"), pp = l.deg("parallelism.pipeline_parallel_degree"),
                       cp = l.deg("parallelism.context_parallel_degree"), ep = l.deg("parallelism.expert_parallel_degree"),
                       vpp = l.deg("parallelism.virtual_pipeline_degree");
    const auto heads = l.opt("model.num_attention_heads"), kv = l.opt("model.num_kv_heads"),
               layers = l.opt("model.num_layers"), experts = l.opt("model.num_experts"), seq = l.opt("training.seq_len"),
               world = l.opt("job.world_size");
    const fact* tp_f = l.get("parallelism.tensor_parallel_degree");
    const fact* pp_f = l.get("parallelism.pipeline_parallel_degree");
    const fact* cp_f = l.get("parallelism.context_parallel_degree");
    const fact* ep_f = l.get("parallelism.expert_parallel_degree");

    // Tensor parallel shards attention heads and KV heads.
    if (tp_f && tp > 1 && heads && *heads % tp != 0)
        fail(*tp_f, fmt::format("TP {} does not divide the {} attention heads", tp, *heads));
    if (tp_f && tp > 1 && kv && *kv > 0 && *kv % tp != 0)
        fail(*tp_f, fmt::format("TP {} does not divide the {} KV heads", tp, *kv));
    // Pipeline stages hold whole layers.
    if (pp_f && layers && pp > *layers) fail(*pp_f, fmt::format("PP {} is larger than the {} layers", pp, *layers));
    if (pp_f && layers && pp > 1 && *layers % (pp * vpp) != 0) {
        if (l.megatron)
            fail(*pp_f, fmt::format("Megatron needs the {} layers divisible by PP {} x virtual stages {}", *layers, pp, vpp));
        const std::int64_t per = *layers / pp;
        assumptions.push_back(fmt::format("{} layers over PP {}: the framework gives the first {} stages {} layers and "
                                          "the others {} (uneven split)",
                                          *layers, pp, *layers % pp, per + 1, per));
    }
    // Context parallel: load-balanced ring attention splits each sequence into 2 x CP chunks;
    // sequence parallel splits it over TP. torchtitan and Megatron take the length as given and
    // refuse it; the others (ms-swift's and DeepSpeed's sequence parallel, HF-style trainers) treat
    // it as a cap and pad each batch to a multiple of the split.
    if (cp_f && cp > 1 && seq && *seq % (2 * cp) != 0) {
        if (l.titan || l.megatron)
            fail(*cp_f, fmt::format("CP {} needs the sequence length {} divisible by 2 x CP = {}", cp, *seq, 2 * cp));
        assumptions.push_back(fmt::format("sequence length {} is not a multiple of 2 x CP = {}: {} pads each batch to "
                                          "one, as estimated",
                                          *seq, 2 * cp, l.fw));
    }
    const bool sp = facts.boolean("parallelism.sequence_parallel").value_or(l.titan);
    if (tp_f && sp && tp > 1 && seq && *seq % tp != 0)
        fail(*tp_f, fmt::format("sequence parallel with TP {} needs the sequence length {} divisible by {}", tp, *seq, tp));

    // The degrees multiply to the world size.
    std::optional<std::int64_t> dp;
    if (world) {
        const fact* wf = l.get("job.world_size");
        const std::int64_t rep = l.deg("parallelism.data_parallel_replicate_degree");
        const auto shard = l.opt("parallelism.data_parallel_shard_degree");
        const fact* shard_f = l.get("parallelism.data_parallel_shard_degree");
        const std::int64_t model = tp * pp * cp;
        if (model > *world)
            fail(*wf, fmt::format("fewer devices than TP {} x PP {} x CP {} = {}", tp, pp, cp, model));
        if (l.titan) {
            if (shard && *shard > 0) {
                if (rep * *shard * model != *world)
                    fail(*shard_f, fmt::format("dp_replicate {} x dp_shard {} x TP {} x PP {} x CP {} = {}, not the world size {}",
                                               rep, *shard, tp, pp, cp, rep * *shard * model, *world));
                dp = rep * *shard;
            } else {
                if (*world % (rep * model) != 0)
                    fail(*wf, fmt::format("not a multiple of dp_replicate {} x TP {} x PP {} x CP {} = {}", rep, tp, pp, cp,
                                          rep * model));
                dp = *world / model;
            }
        } else {
            if (*world % model != 0)
                fail(*wf, fmt::format("not a multiple of TP {} x PP {} x CP {} = {}", tp, pp, cp, model));
            dp = *world / model;
            if (shard && *shard > 0 && *shard * rep != *dp)
                fail(*shard_f, fmt::format("world size {} / (TP {} x PP {} x CP {}) gives {} data-parallel ranks, not {}", *world,
                                           tp, pp, cp, *dp, *shard * rep));
        }
    }
    // Expert parallel: whole experts per rank, inside the group it borrows its ranks from.
    if (ep_f && ep > 1) {
        if (experts && *experts == 0) fail(*ep_f, "expert parallelism on a model without experts");
        if (experts && *experts % ep != 0) fail(*ep_f, fmt::format("EP {} does not divide the {} experts", ep, *experts));
        if (dp) {
            if (l.titan) {
                const std::int64_t etp = l.deg("parallelism.expert_tensor_parallel_degree");
                const std::int64_t shard_cp = (*dp / l.deg("parallelism.data_parallel_replicate_degree")) * cp;
                if (etp != 1 && etp != tp)
                    fail(*l.get("parallelism.expert_tensor_parallel_degree"), "torchtitan supports ETP = TP or ETP = 1");
                const std::int64_t group = etp == tp ? shard_cp : shard_cp * tp, unit = etp == tp ? cp : cp * tp;
                if (group % ep != 0 || ep % unit != 0)
                    fail(*ep_f, fmt::format("EP {} must divide dp_shard x CP{} = {} and be a multiple of CP{} = {}", ep,
                                            etp == tp ? "" : " x TP", group, etp == tp ? "" : " x TP", unit));
            } else if (l.megatron) {
                const bool etp_stated = l.get("parallelism.expert_tensor_parallel_degree") != nullptr;
                const std::int64_t etp = etp_stated ? l.deg("parallelism.expert_tensor_parallel_degree", tp)
                                                    : megatron_default_expert_tp(tp, ep, *world / pp);
                if (!etp_stated && etp != tp)
                    assumptions.push_back(fmt::format("expert TP not given: EP {} x TP {} does not fit the {} ranks of a "
                                                      "pipeline stage, so expert TP 1 (the layout that fits)",
                                                      ep, tp, *world / pp));
                if ((*world / pp) % (ep * etp) != 0)
                    fail(*ep_f, fmt::format("EP {} x expert TP {} must divide world size / PP = {}", ep, etp, *world / pp));
            } else if (*dp % ep != 0) {
                fail(*ep_f, fmt::format("EP {} does not divide the {} data-parallel ranks", ep, *dp));
            }
        }
    }
    // Micro-batches and global batch.
    const auto local = l.opt("training.local_batch_size");
    if (const fact* mbs = l.get("parallelism.pipeline_parallel_microbatch_size"); mbs && l.titan && pp > 1 && local &&
                                                                                  mbs->val.is_integer() &&
                                                                                  *local % mbs->val.as_integer() != 0)
        fail(*mbs, fmt::format("does not divide the local batch size {}", *local));
    if (const auto tok = l.opt("training.tokens_per_microbatch"); tok && seq && *tok % *seq != 0)
        assumptions.push_back(fmt::format("{} tokens per micro-batch / {} tokens per sequence: {} sequences (rounded down)",
                                          *tok, *seq, std::max<std::int64_t>(1, *tok / *seq)));
    if (const fact* gb = l.get("training.global_batch_size"); gb && gb->val.is_integer() && gb->val.as_integer() > 0 && dp &&
                                                              local && (l.titan || l.megatron || l.deepspeed)) {
        const std::int64_t g = gb->val.as_integer(), unit = *local * *dp;
        const auto ga = l.opt("training.gradient_accumulation_steps");
        if (l.deepspeed && ga && g != unit * *ga)
            fail(*gb, fmt::format("DeepSpeed needs train_batch_size = micro-batch {} x accumulation {} x data parallel {} = {}",
                                  *local, *ga, *dp, unit * *ga));
        if (g % unit != 0)
            fail(*gb, fmt::format("not a multiple of micro-batch {} x data parallel {} = {}", *local, *dp, unit));
    }
    if (!assumptions.empty()) {
        provenance p;
        p.producer = "config.derived";
        value::list_t a;
        for (const auto& s : assumptions) a.emplace_back(s);
        facts.emit("job.assumptions", value(std::move(a)), p);
    }
    return assumptions;
}

void finish_job_facts(fact_store& facts) {
    derive_allocator_facts(facts);
    derive_job_facts(facts);
    validate_job_facts(facts);
}

void copy_job_facts(const fact_store& all, fact_store& out) {
    static const char* const prefixes[] = {"job.",   "training.", "parallelism.", "activation_checkpoint.", "optimizer.",
                                           "compile.", "quantize.", "model.",       "device.",                "framework.",
                                           "env.",     "allocator."};
    for (const fact* f : all.current())
        for (const char* p : prefixes)
            if (f->name.rfind(p, 0) == 0) {
                out.emit(*f);
                break;
            }
}

std::optional<std::string> override_problem(const fact_store& facts, const std::vector<canonical_override>& overrides) {
    fact_store copy(facts.vocab());
    copy_job_facts(facts, copy);  // job.assumptions comes along and is stated again by the checks
    provenance p;
    p.producer = "what-if";
    for (const auto& o : overrides) {
        p.excerpt = "--set " + o.key + "=" + value_key(o.val);
        copy.emit(o.key, o.val, p);
    }
    try {
        finish_job_facts(copy);
    } catch (const usage_error& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

}  // namespace oomdx
