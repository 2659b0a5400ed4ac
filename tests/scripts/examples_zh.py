#!/usr/bin/env python3
"""English prose in a Chinese report (used by examples_zh.sh).

Reads a report (text, markdown or html) on stdin and prints every run of 4 or more English
words outside the spans that stay as written: quoted log evidence and excerpts, code and
config blocks, identifiers, file names, commands. Exit 1 when it finds one.

A word is a token of letters only, lower case or capitalized (after trimming brackets and
punctuation); identifiers (snake_case, dotted names, --flags, paths, acronyms, CamelCase) and
Chinese text break a run.
"""
import re
import sys
from html.parser import HTMLParser

MIN_RUN = 4
# A prose word: lower case, or capitalized. Acronyms (NPU, OOM) and CamelCase names are identifiers.
WORD = re.compile(r"^[A-Za-z][a-z]*$")
TRIM = "()[]{}<>,.;:!?\"'`“”‘’，。；：！？（）、"


CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]+")


def english_runs(line):
    # Quoted spans are quotations (log excerpts, config values, commands).
    line = re.sub(r'"[^"]*"|`[^`]*`|\'[^\']*\'', " ", line)
    runs = []
    # Chinese text between two English words ends a run: only English written as English counts.
    for segment in CJK.split(line):
        cur = []
        for tok in segment.split():
            t = tok.strip(TRIM)
            if WORD.match(t):
                cur.append(t)
                continue
            if len(cur) >= MIN_RUN:
                runs.append(" ".join(cur))
            cur = []
        if len(cur) >= MIN_RUN:
            runs.append(" ".join(cur))
    return runs


def text_lines(text, markdown):
    """The prose lines of a text or markdown report."""
    out = []
    code_indent = None  # text: the indentation of the line that opened a code block
    fenced = False
    for raw in text.splitlines():
        line = raw.rstrip()
        indent = len(line) - len(line.lstrip(" "))
        if markdown and line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        if code_indent is not None:
            if line and indent > code_indent:
                continue
            code_indent = None
        body = line.strip()
        # "<framework> 写法：" (or "in X syntax:") opens the overrides in the job's own syntax.
        if body.endswith("写法：") or body.endswith("syntax:"):
            code_indent = indent
            out.append(body)
            continue
        # Evidence lines quoted as logged: "- file:line [role] <log text>" or "[role, role]" (one line read twice).
        m = re.match(r"^- (\S+:\d+ \[[a-z_]+(?:, [a-z_]+)*\]) ", body)
        if m:
            continue
        # Fact evidence: "- fact = value  <- location: "excerpt"".
        m = re.match(r"^- (\S+) = (.*?)  <- (.*)$", body)
        if m:
            continue
        # FIRE / how / why-not lines of --explain are a trace of identifiers.
        out.append(body)
    return out


class HtmlText(HTMLParser):
    SKIP = {"pre", "code", "style", "script"}

    def __init__(self):
        super().__init__()
        self.stack = []  # (tag, skipped)
        self.lines = []
        self.cur = []

    def skipping(self):
        return any(s for _, s in self.stack)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        skip = tag in self.SKIP or "ev" in (a.get("class") or "").split()
        if tag in ("br", "meta", "link", "line", "rect", "circle", "polyline", "path"):
            self.flush()
            return
        self.stack.append((tag, skip))
        self.flush()

    def handle_startendtag(self, tag, attrs):
        self.flush()

    def handle_endtag(self, tag):
        self.flush()
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        if not self.skipping():
            self.cur.append(data)

    def flush(self):
        s = " ".join(x.strip() for x in self.cur if x.strip())
        if s:
            self.lines.append(s)
        self.cur = []


def main():
    kind = sys.argv[1] if len(sys.argv) > 1 else "text"
    text = sys.stdin.read()
    if kind == "html":
        p = HtmlText()
        p.feed(text)
        p.flush()
        lines = p.lines
    else:
        lines = text_lines(text, kind == "markdown")
    bad = 0
    for line in lines:
        for run in english_runs(line):
            print(f"  English: \"{run}\" in: {line[:200]}")
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
