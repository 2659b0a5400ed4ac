// The rank a line names in its first 160 bytes, from the prefixes launchers and loggers put
// before a worker's output; -1 when none. Forms:
//   [rank3]:  rank3]  [rank 3]  [Rank 3]  [RANK 3]  (Rank3)  (Rank 3)  Rank 3:   torchrun, Megatron,
//                                                               DeepSpeed, user loggers
//   Rank: 3  rank=3  rank : 3  (VllmWorker rank=3 pid=...)     key-value prefixes (not local_rank: 3)
//   (Worker_TP3 pid=...)  (Worker_DP0_TP1_EP5 pid=...)           vLLM V1 workers (EP, else TP with PP/DP 0)
//   [default3]:  [gpu187:1]:                                    torchrun --tee "[{role}{local_rank}]:" (local rank;
//                                                               the second: accelerate's SLURM recipe, role "$HOST:")
//   [1,3]<stdout>:                                              Open MPI / the DeepSpeed MPI launcher
//   [3]<stderr>:                                                horovodrun with Gloo: "[{index}]<{stream}>:",
//                                                               the index is the rank (runner safe_shell_exec)
//   [2026-04-16 01:02:09 TP1]  [05-10 16:00:15 DP0 TP3 EP3]      SGLang's scheduler logger: "[{asctime}{prefix}]"
//                                                               with " DPn", " PPn", " TPn", " EPn" (EP, else TP
//                                                               with the others 0, as vLLM's workers)
// Called for every line with a literal hit, on the prefilter threads: a few short scans.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace oomdx {

namespace rank_detail {

inline bool digit(char c) { return c >= '0' && c <= '9'; }
inline bool alnum(char c) {
    return digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Digits at h[i..]: the value and the index after them (== i when none; at most 7 digits).
// (always inlined: rank_prefix runs on every line, a call cost more than the digits)
[[gnu::always_inline]] inline std::int64_t number(std::string_view h, size_t& i) {
    std::int64_t v = 0;
    const size_t start = i;
    while (i < h.size() && i - start < 7 && digit(h[i])) v = v * 10 + (h[i++] - '0');
    if (i < h.size() && digit(h[i])) i = start;  // too long: not a rank
    return i > start ? v : -1;
}

// The number at h[i] when "]:" follows it (torchrun --tee's "[{role}{local_rank}]:"), else -1.
inline std::int64_t tee_number(std::string_view h, size_t i) {
    std::int64_t v = number(h, i);
    return v >= 0 && i + 1 < h.size() && h[i] == ']' && h[i + 1] == ':' ? v : -1;
}

// After "rank" at h[i..]: N] N) N: N>, " N]" " N)", or [ ]*[:=][ ]*N (`keyed`: only where
// "rank" starts a key, not in local_rank / global_rank).
inline std::int64_t after_rank(std::string_view h, size_t i, bool keyed) {
    size_t d = i;
    std::int64_t v = number(h, d);
    if (v >= 0) return d < h.size() && (h[d] == ']' || h[d] == ')' || h[d] == ':' || h[d] == '>') ? v : -1;
    size_t j = i;
    while (j < h.size() && j - i < 8 && h[j] == ' ') ++j;
    if (j == i + 1) {  // one space: "[rank 3]", "(Rank 3)", "Rank 3: "
        d = j;
        v = number(h, d);
        if (v >= 0 && d < h.size() && (h[d] == ']' || h[d] == ')' || h[d] == ':')) return v;
    }
    if (keyed && j < h.size() && (h[j] == ':' || h[j] == '=')) {
        ++j;
        while (j < h.size() && h[j] == ' ') ++j;
        d = j;
        v = number(h, d);
        if (v >= 0 && (d == h.size() || !alnum(h[d]) || h[d] == ' ')) return v;
    }
    return -1;
}

// Parallel-group tokens of a worker prefix ("TP1", "EP9", "DP0"): the expert rank when one is
// given, else the TP rank when every other group is 0.
struct group_ranks {
    std::int64_t tp = -1, ep = -1, other = 0;
    // One token at h[i] (advances i); false when it is not an upper-case name and a number.
    bool read(std::string_view h, size_t& i, bool underscore_in_name) {
        size_t k = i;
        while (k < h.size() && ((h[k] >= 'A' && h[k] <= 'Z') || (underscore_in_name && h[k] == '_'))) ++k;
        const std::string_view name = h.substr(i, k - i);
        const std::int64_t v = number(h, k);
        if (v < 0 || name.empty()) return false;
        if (name == "TP") tp = v;
        else if (name == "EP") ep = v;
        else other += v;
        i = k;
        return true;
    }
    std::int64_t rank() const { return ep >= 0 ? ep : (other == 0 ? tp : -1); }
};

// "(Worker_TP0 pid=", "(Worker_PP0_TP1 pid=", "(Worker_DP1_TP1_EP9 pid=".
inline std::int64_t vllm_worker(std::string_view h, size_t i) {
    group_ranks g;
    while (i < h.size() && h[i] != ' ' && h[i] != ')') {
        if (h[i] == '_') ++i;
        if (!g.read(h, i, false)) return -1;
    }
    return g.rank();
}

// SGLang: "[<date> <hh:mm:ss>[.ms] DP0 TP1]" at h[i] ('['): the parallel ranks after a time, up to ']'.
inline std::int64_t sglang_prefix(std::string_view h, size_t i) {
    size_t j = i + 1;
    while (j < h.size() && j - i < 16 && (digit(h[j]) || h[j] == '-' || h[j] == '/')) ++j;  // the date
    if (j == i + 1 || j >= h.size() || h[j] != ' ') return -1;
    ++j;
    const size_t t = j;  // hh:mm:ss
    while (j < h.size() && j - t < 16 && (digit(h[j]) || h[j] == ':' || h[j] == '.' || h[j] == ',')) ++j;
    if (j - t < 8 || h[t + 2] != ':') return -1;
    group_ranks g;
    bool any = false;
    while (j < h.size() && h[j] == ' ') {
        ++j;
        if (!g.read(h, j, true)) return -1;
        any = true;
    }
    if (!any || j >= h.size() || h[j] != ']') return -1;
    return g.rank();
}

// Every form but the fast path of rank_prefix; `h` is the line's first 160 bytes.
[[gnu::noinline]] inline std::int64_t search(std::string_view h) {
    for (std::string_view ank : {std::string_view("ank"), std::string_view("ANK")}) {  // rank Rank RANK
        for (size_t pos = 0; (pos = h.find(ank, pos)) != std::string_view::npos; pos += 3) {
            if (pos == 0 || (h[pos - 1] != 'R' && (ank[0] == 'A' || h[pos - 1] != 'r'))) continue;
            if (pos >= 2 && alnum(h[pos - 2])) continue;  // "Frank", "cranked", "FRANK"
            const bool keyed = pos < 2 || h[pos - 2] != '_';
            std::int64_t v = after_rank(h, pos + 3, keyed);
            if (v >= 0) return v;
        }
    }
    if (auto w = h.find("(Worker_"); w != std::string_view::npos) {
        std::int64_t v = vllm_worker(h, w + 8);
        if (v >= 0) return v;
    }
    if (auto w = h.find("[default"); w != std::string_view::npos) {
        std::int64_t v = tee_number(h, w + 8);
        if (v >= 0) return v;
    }
    if (h.size() > 4 && h[0] == '[' && !digit(h[1]) && alnum(h[1])) {  // [host:N]: at the line start
        size_t i = 1;
        while (i < h.size() && i < 64 && (alnum(h[i]) || h[i] == '-' || h[i] == '_' || h[i] == '.')) ++i;
        if (i < h.size() && h[i] == ':') {
            std::int64_t v = tee_number(h, i + 1);
            if (v >= 0) return v;
        }
    }
    for (size_t b = h.find('['); b != std::string_view::npos && b + 1 < h.size(); b = h.find('[', b + 1)) {
        if (!digit(h[b + 1])) continue;  // SGLang "[date time TPn]", after a Ray "(Actor pid=...)" too
        std::int64_t v = sglang_prefix(h, b);
        if (v >= 0) return v;
    }
    if (auto w = h.find("]<std"); w != std::string_view::npos) {  // [jobid,rank]<stdout>:, [rank]<stdout>:
        size_t b = h.rfind('[', w);
        size_t c = b == std::string_view::npos ? b : h.find(',', b);
        size_t d = c != std::string_view::npos && c < w ? c + 1 : b + 1;
        if (b != std::string_view::npos) {
            std::int64_t v = number(h, d);
            if (v >= 0 && d == w) return v;
        }
    }
    return -1;
}

}  // namespace rank_detail

inline std::int64_t rank_prefix(std::string_view s) {
    using namespace rank_detail;
    const std::string_view h = s.substr(0, std::min<size_t>(s.size(), 160));
    if (h.size() > 6 && h[0] == '[' && h[1] == 'r' && h[2] == 'a' && h[3] == 'n' && h[4] == 'k') {
        // "[rankN]:" (torchrun), the commonest prefix: what the search below finds first for it
        size_t d = 5;
        const std::int64_t v = number(h, d);
        if (v >= 0 && d < h.size() && (h[d] == ']' || h[d] == ')' || h[d] == ':' || h[d] == '>')) return v;
    }
    return search(h);
}

}  // namespace oomdx
