#!/usr/bin/env python3
"""The documents tell the truth about the repository (issue 16): docs_check.py SOURCE_DIR

- README.md links every document in docs/;
- every relative link in README.md, docs/*.md and the fixture READMEs names
  a file or folder that exists;
- no document cites a file outside the repository (../shared/..., /work/...);
- README.md's layout table names every top-level source folder and every
  folder of analyzer/;
- every file a fixture README's tables list (first column) exists below it.
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1]).resolve()
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL - " + msg)


def ok(msg):
    print("ok   - " + msg)


readme = (root / "README.md").read_text()
docs = sorted(p for p in (root / "docs").glob("*.md"))
listing = readme.split("## Documents", 1)[1] if "## Documents" in readme else ""
missing = [d.name for d in docs if f"(docs/{d.name})" not in listing]
(fail if missing else ok)(
    f"README.md's Documents section links every document in docs/{': not ' + ', '.join(missing) if missing else ''}")

documents = [root / "README.md"] + docs + sorted(root.glob("tests/fixtures/**/README.md"))
link = re.compile(r"\[[^\]]*\]\(([^)#\s]+)(?:#[^)]*)?\)")
bad_links = []
for doc in documents:
    for target in link.findall(doc.read_text()):
        if re.match(r"[a-z]+://|mailto:", target):
            continue
        if not (doc.parent / target).exists():
            bad_links.append(f"{doc.relative_to(root)} -> {target}")
(fail if bad_links else ok)(f"relative links resolve{': ' + '; '.join(bad_links) if bad_links else ''}")

outside = re.compile(r"\.\./shared/|/work/|\.\./\.\./\.\.")
cites = [f"{doc.relative_to(root)}:{n}" for doc in documents
         for n, line in enumerate(doc.read_text().splitlines(), 1) if outside.search(line)]
(fail if cites else ok)(f"no document cites a file outside the repository{': ' + ', '.join(cites) if cites else ''}")

layout = readme.split("## Layout", 1)[1] if "## Layout" in readme else ""
folders = [p.name + "/" for p in root.iterdir()
           if p.is_dir() and not p.name.startswith((".", "build"))]
folders += ["analyzer/" + p.name + "/" for p in (root / "analyzer").iterdir() if p.is_dir()]
unnamed = [f for f in sorted(folders)
           if f"`{f}`" not in layout and f"`{f.split('/', 1)[-1]}`" not in layout]
(fail if unnamed else ok)(f"the README layout names every folder{': not ' + ', '.join(unnamed) if unnamed else ''}")

listed_missing = []
for doc in root.glob("tests/fixtures/**/README.md"):
    base = doc.parent
    for line in doc.read_text().splitlines():
        cells = line.split("|")
        if len(cells) < 3 or set(cells[1].strip()) <= set("-: "):
            continue
        for name in re.split(r",\s*|\s+/\s+", cells[1]):
            name = re.sub(r"\s*\(.*\)$", "", name.strip().strip("`")).strip("`")
            # File names only: a header cell, an ID or prose is not one.
            if not re.fullmatch(r"[\w.@+-]+(/[\w.@+-]+)*/?", name) or "." not in name and not name.endswith("/"):
                continue
            if not (base / name).exists() and not any(base.rglob(name.rstrip("/"))):
                listed_missing.append(f"{doc.relative_to(root)}: {name}")
(fail if listed_missing else ok)(
    f"fixture READMEs list only files that exist{': ' + '; '.join(listed_missing) if listed_missing else ''}")

sys.exit(1 if failures else 0)
