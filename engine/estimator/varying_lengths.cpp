// Varying step lengths through the caching-allocator model (varying_lengths.h).
#include "engine/estimator/varying_lengths.h"

#include <algorithm>
#include <cmath>

#include "engine/estimator/allocator_sim.h"
#include "engine/estimator/estimate_model.h"

namespace oomdx::est {
namespace {

// The large buffers of one step at one length, in the order a step allocates them.
struct step_shape {
    std::int64_t layers = 0;
    double saved = 0;                  // one layer's saved (checkpointed) input, kept until its backward
    std::vector<double> fwd, bwd;      // one layer's forward intermediates / recompute + backward buffers
    double dequant = 0;                // a quantized base's dequantized weight, per linear call
    double n = 0, bpe = 0;             // loss: token x vocab elements and bytes per element
    double loss_other = 0;             // loss buffers when bpe is small (fused / chunked losses)
    double residual = 0;               // residual-stream gradient (tokens x h x dtype)
};

// Splits `bytes` into blocks of at most `piece` (a layer's intermediates are separate tensors).
void split_into(std::vector<double>& out, double bytes, double piece) {
    if (piece <= 0) return;
    while (bytes > 1.0) {
        out.push_back(std::min(bytes, piece));
        bytes -= piece;
    }
}

step_shape shape_at(const estimate_input& in, std::int64_t len) {
    estimate_input v = in;
    v.seq_len = len;
    v.variant = 0;
    breakdown b;
    compute(v, b);
    const stage_figures& st = b.stages.back();
    const double tokens = b.tokens;
    const double t = double(std::max<std::int64_t>(1, in.tp));
    const layer_act la = layer_activation(v, false);
    step_shape s;
    s.layers = std::max<std::int64_t>(1, st.layers);
    s.saved = st.activations / std::max(1.0, st.inflight);
    const double h = double(in.model.hidden);
    const double ffn = double(in.model.ffn > 0 ? in.model.ffn : 4 * in.model.hidden);
    const double piece = tokens * std::max(ffn, h) * 2.0 / t;  // the largest intermediate: an MLP projection
    split_into(s.fwd, la.transient * tokens, piece);
    split_into(s.bwd, ((in.ac != ac_kind::none ? la.working : 0.0) + la.backward) * tokens, piece);
    if (in.ft.kind == finetune_kind::lora && in.ft.base_bits < 16)
        s.dequant = largest_linear(in.model, false) / t * 2.0;
    s.residual = tokens * 2.0 * h;
    s.bpe = b.logits_bpe;
    const double loss = std::max(0.0, st.logits - tokens * 2.0 * h);
    if (s.bpe >= 6.0) s.n = loss / s.bpe;
    else s.loss_other = loss;
    return s;
}

// One training step: forward (saved inputs kept, intermediates freed per layer), loss, backward
// (layers in reverse: recompute and gradients, then the saved input goes).
bool replay_step(allocator_sim& a, const step_shape& s) {
    auto A = [&](double bytes) { return a.alloc(std::int64_t(bytes)); };
    std::vector<int> saved(std::size_t(s.layers), -1), tmp;
    for (std::int64_t l = 0; l < s.layers; ++l) {
        saved[std::size_t(l)] = A(s.saved);
        if (s.dequant > 0) a.free(A(s.dequant));
        tmp.clear();
        for (double x : s.fwd) tmp.push_back(A(x));
        for (int x : tmp) a.free(x);
    }
    // loss: compute-dtype logits, their fp32 copy (the logits freed), the fp32 buffers alive at the
    // start of backward (bpe x N in all), then the compute-dtype gradient and the head's input gradient
    int grad = -1;
    if (s.n > 0) {
        const int logits = A(2.0 * s.n);
        std::vector<int> f32{A(4.0 * s.n)};
        a.free(logits);
        double rest = s.bpe - 4.0;
        for (; rest >= 4.0 - 1e-9; rest -= 4.0) f32.push_back(A(4.0 * s.n));
        if (rest > 0.25) f32.push_back(A(rest * s.n));
        for (auto it = f32.rbegin(); it != f32.rend(); ++it) a.free(*it);
        const int g = A(2.0 * s.n);
        grad = A(s.residual);
        a.free(g);
    } else {
        const int l = s.loss_other > 0 ? A(s.loss_other) : -1;
        grad = A(s.residual);
        a.free(l);
    }
    for (std::int64_t l = s.layers - 1; l >= 0; --l) {
        if (s.dequant > 0) a.free(A(s.dequant));
        tmp.clear();
        for (double x : s.bwd) tmp.push_back(A(x));
        const int next = A(s.residual);
        for (auto it = tmp.rbegin(); it != tmp.rend(); ++it) a.free(*it);
        a.free(grad);
        grad = next;
        a.free(saved[std::size_t(l)]);
    }
    a.free(grad);
    return a.ooms() == 0;
}

bool replay_all(const std::vector<step_shape>& steps, std::int64_t limit, std::int64_t* peak) {
    allocator_sim a(limit);
    for (const auto& s : steps)
        if (!replay_step(a, s)) return false;
    if (peak) *peak = a.peak_reserved();
    return true;
}

// The smallest allocator limit (to 32 MiB) under which the sequence completes.
std::int64_t need_of(const std::vector<step_shape>& steps, std::int64_t hi) {
    std::int64_t lo = 0;
    while (hi - lo > (std::int64_t(32) << 20)) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        if (replay_all(steps, mid, nullptr)) hi = mid;
        else lo = mid;
    }
    return hi;
}

}  // namespace

bool lengths_vary(const estimate_input& in) {
    return in.lengths_vary && !in.expandable_segments && in.pp <= 1 && in.seq_len > 1;
}

std::vector<std::int64_t> record_lengths(std::int64_t seq_len, double largest_buffer_per_token, std::int64_t steps) {
    double harmonic = 0;
    for (std::int64_t i = 1; i <= std::max<std::int64_t>(1, steps); ++i) harmonic += 1.0 / double(i);
    const int records = std::max(1, int(std::floor(harmonic)));  // expected new maxima, the full length included
    std::vector<std::int64_t> out;
    double gap = double(seq_len);
    for (int j = 1; j < records; ++j) {
        gap /= 2.0;
        // closer than the segment rounding of the largest buffer: the cached blocks fit it
        if (gap * largest_buffer_per_token < double(k_alloc_round_large) || gap < 1.0) break;
        out.push_back(seq_len - std::int64_t(std::llround(gap)));
    }
    out.push_back(seq_len);
    return out;
}

length_replay replay_lengths(const estimate_input& in, const std::vector<std::int64_t>& lengths, bool with_need,
                             std::int64_t device_peak) {
    length_replay r;
    r.lengths = lengths;
    if (lengths.empty()) return r;
    std::vector<step_shape> fixed, varying;
    const step_shape full = shape_at(in, in.seq_len);
    for (std::int64_t len : lengths) {
        varying.push_back(len == in.seq_len ? full : shape_at(in, len));
        fixed.push_back(full);
    }
    // the full length once more: the records are behind, the run goes on at sizes already cached
    varying.push_back(full);
    fixed.push_back(full);
    replay_all(fixed, 0, &r.fixed_reserved);
    replay_all(varying, 0, &r.varying_reserved);
    if (with_need) {
        r.fixed_need = need_of(fixed, r.fixed_reserved + (std::int64_t(64) << 20));
        r.varying_need = need_of(varying, r.varying_reserved + (std::int64_t(64) << 20));
    }
    // Unlimited, the cache of every earlier size adds up past any device (226 GiB on an 80 GB card): on a device
    // the allocator reserves at most what the rest of the job leaves, releasing cached segments before it grows.
    r.unlimited_growth = std::max<std::int64_t>(0, r.varying_reserved - r.fixed_reserved);
    if (device_peak > 0 && in.capacity_bytes > 0) {
        const std::int64_t outside = std::max<std::int64_t>(0, device_peak - r.fixed_reserved);
        r.limit = std::max<std::int64_t>(r.fixed_reserved, in.capacity_bytes - outside);
        if (r.varying_reserved > r.limit) {
            std::int64_t capped = 0;
            r.capped = true;
            r.completes = replay_all(varying, r.limit, &capped);
            r.varying_reserved = r.completes ? capped : r.limit;
        }
    }
    r.growth = std::max<std::int64_t>(0, r.varying_reserved - r.fixed_reserved);
    r.applied = true;
    return r;
}

length_replay replay_job(const estimate_input& in, double logits_bpe, std::int64_t device_peak) {
    if (!lengths_vary(in)) return {};
    // the largest buffer per token of the step: the fp32 loss buffer, else an MLP intermediate
    const double vocab_elem = logits_bpe >= 6.0 ? 4.0 * double(in.model.vocab) : 0.0;
    const double largest = std::max(vocab_elem, 2.0 * double(std::max(in.model.ffn, in.model.hidden))) *
                           double(std::max<std::int64_t>(1, in.micro_batch)) * double(std::max(1, in.policy_seqs_per_sample));
    return replay_lengths(in, record_lengths(in.seq_len, largest, k_assumed_steps), true, device_peak);
}

}  // namespace oomdx::est
