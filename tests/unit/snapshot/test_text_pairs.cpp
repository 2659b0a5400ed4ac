// text_pairs (snap37): the byte-pair signature that skips a search gives the search's answer on
// every needle, and it does skip: most needles absent from a frame's text are refused by it.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "parsers/snapshot/categories.h"
#include "parsers/snapshot/text_pairs.h"

using namespace oomdx::snap;

namespace {

const char* const k_pair_texts[] = {
    "/home/u/model.py",
    "/usr/lib/python3.11/site-packages/torch/optim/adam.py",
    "flash_attn/flash_attn_interface.py",
    "_flash_attn_forward",
    "DistributedDataParallel",
    "??",
    "a",
    "",
    "<frozen importlib._bootstrap>",
    "/x/torch_npu/distributed/hccl_utils.py",
};

const char* const k_pair_needles[] = {
    "torch", "/torch/", "attn", "step", "_init_group", "forward", "Backward", "/fsdp/", "py", "y",
    "", "hccl", "optim/", "??", "a", "model.py", "/home/u/model.py/", "DistributedDataParallel",
    "nn/parallel/distributed.py", "<frozen ", "/lib/python", "-packages/",
};

// A small deterministic generator for needles over a narrow alphabet (many near misses).
std::string pair_needle(std::uint32_t& s, std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
        s = s * 1664525u + 1013904223u;
        out.push_back("/_.apyt"[(s >> 24) % 7]);
    }
    return out;
}

}  // namespace

TEST_CASE("text_pairs: contains gives find's answer on every substring and near miss") {
    std::uint32_t seed = 37;
    std::size_t checked = 0;
    for (const char* t : k_pair_texts) {
        const std::string text(t);
        const text_pairs p(text);
        std::vector<std::string> needles(std::begin(k_pair_needles), std::end(k_pair_needles));
        for (std::size_t i = 0; i <= text.size(); ++i)
            for (std::size_t n = 0; i + n <= text.size(); ++n) needles.push_back(text.substr(i, n));
        for (std::size_t k = 0; k < 400; ++k) needles.push_back(pair_needle(seed, 1 + k % 6));
        for (const auto& n : needles) {
            const bool found = text.find(n) != std::string::npos;
            CHECK(p.contains(text, n) == found);
            if (found) CHECK(p.may_contain(n));
            ++checked;
        }
    }
    CHECK(checked > 2000);
}

TEST_CASE("text_pairs: most absent needles are refused without a search") {
    std::size_t absent = 0, refused = 0;
    for (const char* t : k_pair_texts) {
        const std::string text(t);
        const text_pairs p(text);
        for (const char* n : k_pair_needles) {
            if (std::string(n).size() < 2 || text.find(n) != std::string::npos) continue;
            ++absent;
            refused += !p.may_contain(n);
        }
    }
    REQUIRE(absent > 100);
    CHECK(refused * 10 > absent * 8);  // a signature that refuses nothing fails here
}

TEST_CASE("category_rules::classes is any_mask, frame_category and site_candidate at once") {
    const category_rules r = category_rules::shipped();
    const frame_text frames[] = {
        {"forward", "/srv/job/net.py", 11},
        {"hccl_broadcast", "/y/torch_npu/distributed/comm.py", 21},
        {"_init_group", "/opt/torch/optim/adamw.py", 8},
        {"Attention_Forward", "layers/attn_impl.py", 31},
        {"run_backward", "/opt/torch/autograd/graph.py", 12},
        {"cudaMallocAsync", "??", 0},
        {"exp_avg_update", "train.py", 4},
        {"all_gather_into_tensor", "/opt/torch/distributed/distributed_c10d.py", 7},
        {"<module>", "<frozen runpy>", 1},
        {"fully_shard", "/opt/torch/distributed/fsdp/api.py", 2},
    };
    for (const auto& f : frames) {
        const auto c = r.classes(f);
        CHECK(c.any_mask == r.any_mask(f));
        CHECK(c.category == r.frame_category(f));
        CHECK(c.site == r.site_candidate(f));
    }
    CHECK(r.classes(frames[0]).category == cat_activation);
    CHECK(r.classes(frames[2]).any_mask != 0);  // an any-frame rule (optimizer state)
    CHECK(r.classes(frames[1]).category == cat_communication);
    CHECK(!r.classes(frames[8]).site);
    CHECK(r.classes(frames[9]).any_mask != 0);  // FSDP's files
}
