#include <doctest/doctest.h>

#include "engine/core/fact_store.h"
#include "engine/core/version.h"

using namespace oomdx;

TEST_CASE("release versions as configs and pip write them") {
    auto v = parse_release_version("2.9.1+cu128");
    REQUIRE(v);
    CHECK(v->major == 2);
    CHECK(v->minor == 9);
    CHECK(v->text == "2.9.1+cu128");
    v = parse_release_version("v1.10");
    REQUIRE(v);
    CHECK(v->major == 1);
    CHECK(v->minor == 10);  // not 1.1
    v = parse_release_version("4.48.0.dev0");
    REQUIRE(v);
    CHECK(v->minor == 48);
    v = parse_release_version("2");
    REQUIRE(v);
    CHECK(v->major == 2);
    CHECK(v->minor == -1);
    CHECK_FALSE(v->at_least(2, 0));  // no minor: not known to be 2.0 or later
    CHECK(v->at_least(1, 13));
    CHECK_FALSE(parse_release_version(""));
    CHECK_FALSE(parse_release_version("latest"));
    CHECK_FALSE(parse_release_version("1234567.0"));  // not a version
}

TEST_CASE("at_least on both sides of a release") {
    CHECK(parse_release_version("2.11.0")->at_least(2, 11));
    CHECK_FALSE(parse_release_version("2.10.9")->at_least(2, 11));
    CHECK(parse_release_version("3.0")->at_least(2, 11));
    // a patch release (bitsandbytes 0.43.2 changed what 4-bit layers keep)
    CHECK(parse_release_version("0.43.2")->at_least(0, 43, 2));
    CHECK(parse_release_version("0.43.10+cu121")->at_least(0, 43, 2));
    CHECK_FALSE(parse_release_version("0.43.1")->at_least(0, 43, 2));
    CHECK_FALSE(parse_release_version("0.43")->at_least(0, 43, 2));
    CHECK(parse_release_version("0.44")->at_least(0, 43, 2));
    CHECK(parse_release_version("2.9")->patch == 0);
}

TEST_CASE("a version fact written as a string or a number") {
    fact_store f;
    f.emit("job.torch_version", value(1.1), provenance{});
    f.emit("job.transformers_version", value(std::string("4.46.3")), provenance{});
    f.emit("job.world_size", value(true), provenance{});
    const auto t = version_fact(f, "job.torch_version");
    REQUIRE(t);
    CHECK(t->major == 1);
    CHECK(t->text == "1.1");
    CHECK(version_fact(f, "job.transformers_version")->minor == 46);
    CHECK_FALSE(version_fact(f, "job.world_size"));
    CHECK_FALSE(version_fact(f, "job.none"));
}
