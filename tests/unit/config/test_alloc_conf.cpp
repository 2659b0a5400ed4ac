// The caching allocator's settings string read into allocator.* facts: the device's own variable
// first, then PYTORCH_ALLOC_CONF; a what-if that changes the variable re-derives.
#include <doctest/doctest.h>

#include "engine/core/fact_store.h"
#include "parsers/config/alloc_conf.h"

namespace {

void put_env(oomdx::fact_store& f, const char* name, const char* text) {
    oomdx::provenance p;
    p.producer = "config";
    p.file = "job.yaml";
    p.line = 3;
    f.emit(name, oomdx::value(std::string(text)), p);
}

}  // namespace

TEST_CASE("alloc conf: keys and values as PyTorch spells them, case and spaces aside") {
    const oomdx::alloc_conf a = oomdx::parse_alloc_conf("expandable_segments:True,max_split_size_mb:128");
    REQUIRE(a.expandable_segments);
    CHECK(*a.expandable_segments);
    REQUIRE(a.max_split_size_mb);
    CHECK(*a.max_split_size_mb == 128);
    const oomdx::alloc_conf b = oomdx::parse_alloc_conf(" Expandable_Segments : false ");
    REQUIRE(b.expandable_segments);
    CHECK(!*b.expandable_segments);
    CHECK(!b.max_split_size_mb);
    // unreadable values and look-alike keys are left out
    const oomdx::alloc_conf c = oomdx::parse_alloc_conf("expandable_segments:yes,max_split_size_mb:-4,garbage_collection_threshold:0.6");
    CHECK(!c.expandable_segments);
    CHECK(!c.max_split_size_mb);
    CHECK(!oomdx::parse_alloc_conf("").expandable_segments);
    CHECK(!oomdx::parse_alloc_conf("expandable_segments_x:True").expandable_segments);
}

TEST_CASE("alloc conf: the device's own variable first, then PYTORCH_ALLOC_CONF, with provenance") {
    oomdx::fact_store f;
    put_env(f, "env.PYTORCH_ALLOC_CONF", "expandable_segments:False,max_split_size_mb:64");
    put_env(f, "env.PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
    oomdx::derive_allocator_facts(f);
    REQUIRE(f.get("allocator.expandable_segments"));
    CHECK(f.get("allocator.expandable_segments")->val == oomdx::value(true));
    CHECK(f.get("allocator.expandable_segments")->prov.file == "job.yaml");
    CHECK(f.get("allocator.expandable_segments")->prov.derived_from == std::vector<std::string>{"env.PYTORCH_CUDA_ALLOC_CONF"});
    REQUIRE(f.get("allocator.max_split_size_mb"));  // only the generic variable sets it
    CHECK(f.get("allocator.max_split_size_mb")->val == oomdx::value(std::int64_t(64)));
    // a what-if that turns it off re-derives
    put_env(f, "env.PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:False");
    oomdx::derive_allocator_facts(f);
    CHECK(f.get("allocator.expandable_segments")->val == oomdx::value(false));
}

TEST_CASE("alloc conf: an NPU job reads PYTORCH_NPU_ALLOC_CONF, not the CUDA variable") {
    oomdx::fact_store f;
    put_env(f, "env.PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
    put_env(f, "device.kind", "npu");
    oomdx::derive_allocator_facts(f);
    CHECK(!f.get("allocator.expandable_segments"));
    put_env(f, "env.PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True");
    oomdx::derive_allocator_facts(f);
    REQUIRE(f.get("allocator.expandable_segments"));
    CHECK(f.get("allocator.expandable_segments")->val == oomdx::value(true));
}
