// A growable array in fixed chunks, indexed like a vector: no reallocation copy (and no
// doubled peak) while a trace of millions of entries grows, no copy when it is handed over.
// The first chunk comes from the heap; later ones are block_pool blocks, faulted in ahead.
#pragma once

#include <cstddef>
#include <cstdint>
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
    T& operator[](std::size_t i) { return m_chunks[i >> k_shift].get()[i & k_mask]; }
    const T& operator[](std::size_t i) const { return m_chunks[i >> k_shift].get()[i & k_mask]; }
    T& back() { return (*this)[m_size - 1]; }
    const T& back() const { return (*this)[m_size - 1]; }
    T& front() { return (*this)[0]; }
    const T& front() const { return (*this)[0]; }
    iterator begin() { return {this, 0}; }
    iterator end() { return {this, m_size}; }
    const_iterator begin() const { return {this, 0}; }
    const_iterator end() const { return {this, m_size}; }

    void push_back(const T& x) {
        if ((m_size & k_mask) == 0 && (m_size >> k_shift) == m_chunks.size()) add_chunk();
        new (m_chunks[m_size >> k_shift].get() + (m_size & k_mask)) T(x);
        ++m_size;
    }
    void clear() {
        m_chunks.clear();
        m_size = 0;
    }

private:
    void add_chunk() {
        if (m_chunks.empty()) {
            m_chunks.emplace_back(static_cast<T*>(::operator new(k_chunk * sizeof(T))), release{false});
            return;
        }
        m_chunks.emplace_back(static_cast<T*>(block_pool::shared().take()), release{true});
    }
    struct release {
        bool pooled = false;
        void operator()(T* p) const {
            if (pooled) block_pool::give_back(p);
            else ::operator delete(p);
        }
    };
    std::vector<std::unique_ptr<T, release>> m_chunks;
    std::size_t m_size = 0;
};

}  // namespace oomdx::snap
