// A growable array in fixed chunks, indexed like a vector: no reallocation copy (and no
// doubled peak) while a trace of millions of entries grows, no copy when it is handed over.
// Chunks are block_pool::array_block blocks: later ones are faulted in ahead.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "parsers/snapshot/block_pool.h"

namespace oomdx::snap {

template <class T>
class chunked_list {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
    static constexpr std::size_t shift_for_block() {
        std::size_t s = 0;
        while ((std::size_t(2) << s) * sizeof(T) <= block_pool::k_block) ++s;
        return s;
    }
    static constexpr std::size_t k_shift = shift_for_block();  // 2^k_shift elements fill a block
    static constexpr std::size_t k_chunk = std::size_t(1) << k_shift;
    static constexpr std::size_t k_mask = k_chunk - 1;
    static_assert(k_chunk * sizeof(T) <= block_pool::k_block);

public:
    template <bool Const>
    class iter {
    public:
        using iterator_category = std::random_access_iterator_tag;
        using value_type = T;
        using difference_type = std::ptrdiff_t;
        using pointer = std::conditional_t<Const, const T*, T*>;
        using reference = std::conditional_t<Const, const T&, T&>;
        using owner = std::conditional_t<Const, const chunked_list*, chunked_list*>;

        iter() = default;
        iter(owner l, std::size_t i) : m_l(l), m_i(i) {}
        reference operator*() const { return (*m_l)[m_i]; }
        pointer operator->() const { return &(*m_l)[m_i]; }
        reference operator[](difference_type d) const { return (*m_l)[m_i + d]; }
        iter& operator++() { ++m_i; return *this; }
        iter operator++(int) { iter t = *this; ++m_i; return t; }
        iter& operator--() { --m_i; return *this; }
        iter operator--(int) { iter t = *this; --m_i; return t; }
        iter& operator+=(difference_type d) { m_i += d; return *this; }
        iter& operator-=(difference_type d) { m_i -= d; return *this; }
        iter operator+(difference_type d) const { return {m_l, m_i + d}; }
        friend iter operator+(difference_type d, const iter& it) { return it + d; }
        iter operator-(difference_type d) const { return {m_l, m_i - d}; }
        difference_type operator-(const iter& o) const {
            return static_cast<difference_type>(m_i) - static_cast<difference_type>(o.m_i);
        }
        bool operator==(const iter& o) const { return m_i == o.m_i; }
        auto operator<=>(const iter& o) const { return m_i <=> o.m_i; }

    private:
        owner m_l = nullptr;
        std::size_t m_i = 0;
    };
    using value_type = T;
    using iterator = iter<false>;
    using const_iterator = iter<true>;

    chunked_list() = default;
    chunked_list(std::initializer_list<T> xs) {
        for (const T& x : xs) push_back(x);
    }
    chunked_list(chunked_list&&) noexcept = default;
    chunked_list& operator=(chunked_list&&) noexcept = default;
    chunked_list(const chunked_list& o) { *this = o; }
    chunked_list& operator=(const chunked_list& o) {
        if (this == &o) return *this;
        clear();
        for (const T& x : o) push_back(x);
        return *this;
    }

    std::size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    T& operator[](std::size_t i) { return chunk(i >> k_shift)[i & k_mask]; }
    const T& operator[](std::size_t i) const { return chunk(i >> k_shift)[i & k_mask]; }
    T& back() { return (*this)[m_size - 1]; }
    const T& back() const { return (*this)[m_size - 1]; }
    T& front() { return (*this)[0]; }
    const T& front() const { return (*this)[0]; }
    iterator begin() { return {this, 0}; }
    iterator end() { return {this, m_size}; }
    const_iterator begin() const { return {this, 0}; }
    const_iterator end() const { return {this, m_size}; }

    // f(first, n) for each chunk's elements in order: a pass over all of them without indexing.
    template <class F>
    void for_each_run(F&& f) const {
        for (std::size_t c = 0, left = m_size; left > 0; ++c) {
            const std::size_t n = left < k_chunk ? left : k_chunk;
            f(static_cast<const T*>(chunk(c)), n);
            left -= n;
        }
    }

    void push_back(const T& x) {
        if (m_size == m_ready) [[unlikely]] grow();
        new (chunk(m_size >> k_shift) + (m_size & k_mask)) T(x);
        ++m_size;
    }
    // The first chunk, while it is the only one and still the heap's, moved to a block faulted
    // in whole (one huge page): for a list its owner expects to fill that chunk.
    // The slots at the end that have their pages, contiguous in one chunk (at least one:
    // grows first when there are none); commit(k) then takes the first k of them as written.
    T* room(std::size_t& n) {
        if (m_size == m_ready) [[unlikely]] grow();
        n = m_ready - m_size;  // m_ready never passes the end of m_size's chunk (grow, first_chunk_whole)
        return chunk(m_size >> k_shift) + (m_size & k_mask);
    }
    void commit(std::size_t k) { m_size += k; }
    void first_chunk_whole() {
        if (m_chunks.size() != 1 || m_chunks[0].get_deleter().pooled) return;
        block_pool::block_ptr b = block_pool::whole_block();
        std::memcpy(b.get(), m_chunks[0].get(), std::min(m_size, k_chunk) * sizeof(T));
        m_chunks[0] = std::move(b);
        m_ready = std::max(m_ready, k_chunk);
    }
    static constexpr std::size_t chunk_size() { return k_chunk; }
    void clear() {
        m_chunks.clear();
        m_size = 0;
        m_ready = 0;
    }

private:
    // Elements faulted in ahead, 64 KiB at a time, with one call each (a fault per 4 KiB page
    // cost more: docs/snapshot.md, snap14); blocks prepared ahead are already faulted in.
    static constexpr std::size_t k_step = std::size_t(64) << 10 >= sizeof(T) * k_chunk ? k_chunk : (std::size_t(64) << 10) / sizeof(T);
    [[gnu::noinline]] void grow() {
        if ((m_size >> k_shift) == m_chunks.size()) m_chunks.push_back(block_pool::array_block(m_chunks.empty()));
        const block_pool::block_ptr& b = m_chunks[m_size >> k_shift];
        const std::size_t end = (m_size & ~k_mask) + k_chunk;
        if (b.get_deleter().faulted) {
            m_ready = end;
            return;
        }
        const std::size_t to = std::min(end, (m_size / k_step + 1) * k_step);
        block_pool::populate(chunk(m_size >> k_shift) + (m_size & k_mask), (to - m_size) * sizeof(T));
        m_ready = to;
    }
    T* chunk(std::size_t c) const { return static_cast<T*>(m_chunks[c].get()); }
    std::vector<block_pool::block_ptr> m_chunks;
    std::size_t m_size = 0;
    std::size_t m_ready = 0;  // elements below it have their pages (and chunk)
};

}  // namespace oomdx::snap
