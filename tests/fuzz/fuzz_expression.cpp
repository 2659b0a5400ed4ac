// The expression parser on arbitrary text; a parsed expression is evaluated and explained over
// a few facts of every type.
#include "engine/core/fact_store.h"
#include "engine/core/vocabulary.h"
#include "engine/rules/expression.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

const oomdx::fact_store& sample_facts() {
    using namespace oomdx;
    static const fact_store facts = [] {
        fact_store f(&vocabulary::shipped());
        f.emit("oom.source", value(std::string("caching_allocator")), provenance{});
        f.emit("oom.requested_bytes", value(std::int64_t(2) << 30), provenance{});
        f.emit("oom.capacity_bytes", value(std::int64_t(80) << 30), provenance{});
        f.emit("activation_checkpoint.mode", value(std::string("none")), provenance{});
        return f;
    }();
    return facts;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace oomdx;
    static const std::vector<value> list_items = {value(std::string("hccl")), value(std::int64_t(3))};
    name_resolver resolver;
    resolver.vocab = &vocabulary::shipped();
    resolver.macro = [](const std::string&) -> const expr_node* { return nullptr; };
    resolver.list = [](const std::string& n) -> const std::vector<value>* {
        return n == "workspace_sources" ? &list_items : nullptr;
    };
    parsed_expr e = parse_expression(std::string(fuzz::as_text(data, size)), resolver);
    if (!e.ok()) return 0;
    (void)evaluate_condition(*e.root, sample_facts());
    (void)evaluate(*e.root, sample_facts());
    (void)explain_failure(*e.root, sample_facts());
    (void)clone_expr(*e.root);
    return 0;
}
