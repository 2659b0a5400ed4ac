// An RL trainer that runs out of memory while scoring its rollouts (verl compute_log_prob, whether in
// the entropy over the vocabulary or in the model's forward) is in the scoring phase: that pass's own
// micro-batch first, the fused (chunked) log-probs and entropy next in the framework's syntax, not the update's levers; an
// entropy frame outside a scoring call is the loss phase. A framework that trains in bf16 by default is
// not told to turn mixed precision on (end to end, log only; skips when the binary is absent).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/unit/diagnose_text.h"

namespace rl_entropy {

const char* const k_oom =
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 13.91 GiB. GPU 0 has a total capacity of 79.11 GiB "
    "of which 8.85 GiB is free. Process 23444 has 70.25 GiB memory in use. Of the allocated memory 60.49 GiB is "
    "allocated by PyTorch, and 6.77 GiB is reserved by PyTorch but unallocated.\n";

// verl's actor: the scoring call above the shared micro-batch forward, and the entropy frames under it
const char* const k_scoring_call =
    "  File \"/verl/verl/workers/actor/dp_actor.py\", line 332, in compute_log_prob\n"
    "    entropy, log_probs = self._forward_micro_batch(\n";
const char* const k_entropy =
    "  File \"/verl/verl/workers/actor/dp_actor.py\", line 266, in _forward_micro_batch\n"
    "    entropy = verl_F.entropy_from_logits(logits)  # (bsz, response_length)\n"
    "  File \"/verl/verl/utils/torch_functional.py\", line 148, in entropy_from_logits\n"
    "    entropy = torch.logsumexp(logits, dim=-1) - torch.sum(pd * logits, dim=-1)\n";

struct outcome {
    std::string phase, first_action;
    std::vector<std::string> actions, lines;
};

outcome diagnose(const std::string& frames) {
    const auto j = oomdx::test::diagnose_log_text("(WorkerDict pid=4410) Traceback (most recent call last):\n" + frames + k_oom);
    outcome o;
    if (j["oom"]["phase"].is_string()) o.phase = j["oom"]["phase"].get<std::string>();
    for (const auto& rec : j["recommendations"]) {
        o.actions.push_back(rec["action"].get<std::string>());
        if (o.first_action.empty())
            for (const auto& l : rec["rendered"]) o.lines.push_back(l.get<std::string>());
        if (o.first_action.empty()) o.first_action = o.actions.back();
    }
    for (const auto& n : j["not_offered"]) o.actions.push_back("not_offered:" + n["action"].get<std::string>());
    return o;
}

bool has(const outcome& o, const std::string& a) {
    for (const auto& x : o.actions)
        if (x == a) return true;
    return false;
}

}  // namespace rl_entropy

TEST_CASE("verl: an OOM in entropy_from_logits inside compute_log_prob is the scoring pass; its micro-batch, then chunked entropy") {
    const rl_entropy::outcome o = rl_entropy::diagnose(std::string(rl_entropy::k_scoring_call) + rl_entropy::k_entropy);
    CHECK(o.phase == "scoring");
    CHECK(o.first_action == "reduce_scoring_batch");
    CHECK(rl_entropy::has(o, "chunked_loss"));
    CHECK_FALSE(rl_entropy::has(o, "reduce_micro_batch"));
    CHECK_FALSE(rl_entropy::has(o, "mixed_precision"));
    CHECK_FALSE(rl_entropy::has(o, "not_offered:mixed_precision"));
}

TEST_CASE("verl: an OOM in the model's forward inside compute_log_prob is the scoring pass too, not the update") {
    const rl_entropy::outcome o = rl_entropy::diagnose(
        std::string(rl_entropy::k_scoring_call) +
        "  File \"/verl/verl/workers/actor/dp_actor.py\", line 230, in _forward_micro_batch\n"
        "    output = self.actor_module(\n"
        "  File \"/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py\", line 1736, in _call_impl\n"
        "    return forward_call(*args, **kwargs)\n"
        "  File \"/usr/local/lib/python3.10/dist-packages/transformers/models/qwen2/modeling_qwen2.py\", line 120, in forward\n"
        "    attn_output = self.o_proj(attn_output)\n");
    CHECK(o.phase == "scoring");
    CHECK(o.first_action == "reduce_scoring_batch");
    CHECK_FALSE(rl_entropy::has(o, "reduce_micro_batch"));
    CHECK_FALSE(rl_entropy::has(o, "enable_full_ac"));
}

TEST_CASE("an entropy frame in the update (no scoring call above it) is the loss phase: chunked entropy first") {
    const rl_entropy::outcome o = rl_entropy::diagnose(
        std::string("  File \"/verl/verl/workers/actor/dp_actor.py\", line 420, in update_policy\n"
                    "    entropy, log_prob = self._forward_micro_batch(\n") +
        rl_entropy::k_entropy);
    CHECK(o.phase == "loss");
    CHECK(o.first_action == "chunked_loss");
    // verl's fused kernels take the log-probs and the entropy from the hidden states chunk by chunk, so the logits
    // never exist whole; entropy_from_logits_with_chunking chunks the entropy only, over logits that stay whole
    CHECK(std::find(o.lines.begin(), o.lines.end(), "actor_rollout_ref.model.use_fused_kernels=true") != o.lines.end());
    CHECK_FALSE(rl_entropy::has(o, "reduce_scoring_batch"));
}
