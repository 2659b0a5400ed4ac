#!/usr/bin/env python3
"""The Chinese texts use the glossary's terms (docs/glossary-zh.md) and Chinese typography.

Reads every translation file (rules/i18n/zh/*.yaml, knowledge/i18n/zh/*.yaml) and prints each
Chinese text that uses a variant the glossary replaced, or spaces Chinese and Latin wrongly.
Exit 1 when it finds one. Quoted code (`...`) and placeholders ({...}) are not checked.
"""
import glob
import os
import re
import sys

import yaml

IDEO = "\u3400-\u9fff"
# (pattern, what to write instead): each was found in a review of the reports (docs/i18n.md).
RULES = [
    (r"损失", "loss (the glossary keeps the English word: 分块 loss, loss 计算)"),
    (r"适配器", "adapter"),
    (r"底座", "基座 (the frozen base model)"),
    (r"第二份方法", "快照分析方法 (the snapshot analysis method)"),
    (r"活跃", "存活 (live tensors / live memory)"),
    (r"检查点", "激活重计算 / 重计算 (activation checkpointing), checkpoint (a saved checkpoint)"),
    (r"world size", "设备数"),
    (r"\btrace\b", "跟踪记录 (the snapshot's trace)"),
    (r"[Ww]orkspace (?:和|与|或)", "工作空间 (workspace memory)"),
    (r" x ", "× (a product)"),
    (rf"[{IDEO}] [{IDEO}]", "no space between two Chinese characters"),
    (r"[，。：；、！？] ", "no space after full-width punctuation (a folded YAML line leaves one)"),
    (rf"[{IDEO}][()]|[()][{IDEO}]", "full-width parentheses beside Chinese text"),
]


def chinese_texts(node, path=""):
    """Every `zh` string of a parsed translation file, with where it is."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "zh" and isinstance(v, str):
                yield path, v
            else:
                yield from chinese_texts(v, f"{path}.{k}" if path else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from chinese_texts(v, f"{path}[{i}]")


def prose(text):
    # Code and placeholders are written as their language needs; only the Chinese around them counts.
    text = re.sub(r"`[^`]*`", "`", text)
    return re.sub(r"\{[^{}]*\}", "{}", text)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files = sorted(glob.glob(os.path.join(root, "rules/i18n/zh/*.yaml")) +
                   glob.glob(os.path.join(root, "knowledge/i18n/zh/*.yaml")))
    bad = 0
    texts = 0
    for f in files:
        with open(f, encoding="utf-8") as fh:
            doc = yaml.safe_load(fh)
        for where, text in chinese_texts(doc):
            texts += 1
            body = prose(text)
            for pattern, instead in RULES:
                m = re.search(pattern, body)
                if m:
                    rel = os.path.relpath(f, root)
                    print(f"{rel}: {where}: '{m.group(0)}' -> {instead}: {body[max(0, m.start() - 30):m.end() + 30]}")
                    bad += 1
    print(f"{texts} Chinese texts in {len(files)} files, {bad} against the glossary")
    if texts < 500:
        print("FAIL: expected at least 500 Chinese texts")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
