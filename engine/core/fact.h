// A fact: a typed value under a dotted name, with provenance.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/value.h"

namespace oomdx {

// Where a fact came from: an input location, or a rule and the facts it matched.
struct provenance {
    std::string producer;   // "log", "config.torchtitan", "estimator", "rule", ...
    std::string file;       // input path, empty for derived facts
    std::int64_t line = 0;  // 1-based line, 0 when not line-oriented
    std::int64_t offset = -1;  // byte offset, -1 when unknown
    std::string excerpt;    // the raw text the value was read from
    std::string rule_id;    // set for facts derived by a rule
    std::vector<std::string> derived_from;  // fact names a rule or estimator used
    std::vector<int> derived_ids;           // ids of those facts in the store, when known

    // "train.log:123", "snap.pickle@4096", "rule step0_workspace_route", ...
    std::string location() const;
    // Put there by an adapter's defaults ("config.<framework>.default"), not read from an input.
    bool from_default() const { return producer.ends_with(".default"); }
};

struct fact {
    std::string name;
    value val;
    provenance prov;
    int id = -1;  // assigned by the store; increases with every assertion
};

// Producers (parsers, estimator) write facts into a sink; they never decide.
class fact_sink {
public:
    virtual ~fact_sink() = default;
    virtual void emit(fact f) = 0;

    void emit(std::string name, value v, provenance p) {
        emit(fact{std::move(name), std::move(v), std::move(p)});
    }
};

}  // namespace oomdx
