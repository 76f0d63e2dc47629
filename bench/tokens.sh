#!/usr/bin/env bash
# bench/tokens.sh: how close token_estimate() (analyzer/core/token_estimate.h)
# comes to real tokenizers on our own feedback texts.
#
#   bench/tokens.sh [BUILD_DIR] [--commit]
#
# Runs `profeed analyze` on every committed Nsight Compute and Intel fixture
# (each CSV alone, each --set full pair, corpus v2 with its source pages, each
# Intel folder whole) as text, Markdown and JSON, and as text under
# --max-tokens 200 and 500; counts each output with the estimator
# (BUILD_DIR/bench/token_count) and with OpenAI's cl100k_base and o200k_base
# BPE vocabularies (npm's js-tiktoken, installed into BUILD_DIR/tokens/node
# on first use: needs node and npm, and the registry once); prints per kind
# the mean, smallest and largest estimate / real - 1, the under-estimates,
# and for the budgets whether the real count stayed within N.
# --commit also writes the text outputs and their real counts to
# tests/fixtures/tokens/ (what test_tokens checks without npm).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build
COMMIT=0
for a in "$@"; do
    case "$a" in
    --commit) COMMIT=1 ;;
    -h | --help) sed -n 2,20p "$0"; exit 0 ;;
    *) BUILD=$a ;;
    esac
done
PROFEED=$BUILD/client/profeed
COUNT=$BUILD/bench/token_count
for p in "$PROFEED" "$COUNT"; do
    [ -x "$p" ] || { echo "bench/tokens.sh: $p is not built (cmake --build $BUILD)" >&2; exit 2; }
done
command -v node >/dev/null && command -v npm >/dev/null ||
    { echo "bench/tokens.sh: needs node and npm (apt-get install nodejs npm)" >&2; exit 2; }
OUT=$BUILD/tokens
NODE_DIR=$OUT/node
mkdir -p "$NODE_DIR"
if [ ! -d "$NODE_DIR/node_modules/js-tiktoken" ]; then
    npm install --prefix "$NODE_DIR" --no-audit --no-fund --silent js-tiktoken@1.0.21 >&2
fi
rm -rf "$OUT/texts"
mkdir -p "$OUT/texts"

# job NAME FILE...: the outputs of one analysis, when it succeeds.
n_jobs=0
job() {
    local name=$1
    shift
    "$PROFEED" analyze "$@" >"$OUT/texts/$name.text.txt" 2>/dev/null || { rm -f "$OUT/texts/$name.text.txt"; return 0; }
    "$PROFEED" analyze --format markdown "$@" >"$OUT/texts/$name.markdown.txt" 2>/dev/null || true
    "$PROFEED" analyze --format json "$@" >"$OUT/texts/$name.json.txt" 2>/dev/null || true
    for n in 200 500; do
        "$PROFEED" analyze --max-tokens "$n" "$@" >"$OUT/texts/$name.budget$n.txt" 2>/dev/null || true
    done
    n_jobs=$((n_jobs + 1))
}
slug() { echo "$1" | sed 's|^tests/fixtures/||; s|[/.]|_|g'; }

while read -r f; do
    job "$(slug "$f")" "$f"
done < <(find tests/fixtures/ncu -name '*.csv' ! -name 'source_*' ! -path '*/source/*' | sort)
while read -r d; do
    job "$(slug "$d")_full" "$d/full_raw.csv" "$d/full_details.csv"
done < <(find tests/fixtures/ncu -name full_raw.csv -printf '%h\n' | sort)
V2=tests/fixtures/ncu/h200-v2
job ncu_h200-v2_full_with_source "$V2/full_raw.csv" "$V2/full_details.csv" "$V2"/source_*.csv
for d in tests/fixtures/intel/*/; do
    d=${d%/}
    files=()
    for f in "$d"/*; do
        case "$f" in *.py | *.md) ;; *) files+=("$f") ;; esac
    done
    job "$(slug "$d")" "${files[@]}"
done

cd "$OUT/texts"
ls | sort >../files.txt
xargs "$OLDPWD/$COUNT" <../files.txt | sort -k3 >../estimate.tsv
TOKENS_NODE_DIR="$OLDPWD/$NODE_DIR/node_modules/js-tiktoken" \
    xargs node "$OLDPWD/bench/tokens.mjs" <../files.txt | sort -k3 >../real.tsv
cd "$OLDPWD"
join -t $'\t' -1 3 -2 3 "$OUT/estimate.tsv" "$OUT/real.tsv" >"$OUT/joined.tsv"

echo "# token_estimate vs js-tiktoken 1.0.21 on $n_jobs analyses of the committed fixtures"
echo "# $(uname -m), $(nproc) CPUs, node $(node --version); $(date -u +%Y-%m-%d)"
awk -F'\t' '
    # fields: path, estimate, bytes, cl100k, o200k
    {
        kind = $1; sub(/^.*\./, "", kind); sub(/\.txt$/, "", kind)
        k = $1; sub(/\.txt$/, "", k); n = split(k, parts, "."); kind = parts[n]
        for (t = 0; t < 2; t++) {
            real = $(4 + t)
            if (real == 0) continue
            r = $2 / real - 1
            key = kind SUBSEP t
            cnt[key]++; sum[key] += r
            if (!(key in lo) || r < lo[key]) lo[key] = r
            if (!(key in hi) || r > hi[key]) hi[key] = r
            if (r < 0) under[key]++
        }
        chars[kind] += $3; toks[kind] += $5
        if (kind ~ /^budget/) {
            limit = substr(kind, 7) + 0
            budgets[kind]++
            if ($4 > limit || $5 > limit) over[kind]++
            if ($4 > maxreal[kind]) maxreal[kind] = $4
            if ($5 > maxreal[kind]) maxreal[kind] = $5
        }
        kinds[kind] = 1
    }
    END {
        printf "| output | files | bytes/token (o200k) | tokenizer | mean est./real - 1 | min | max | under-estimates |\n"
        printf "| --- | --- | --- | --- | --- | --- | --- | --- |\n"
        split("text markdown json budget200 budget500", order, " ")
        name[0] = "cl100k"; name[1] = "o200k"
        for (i = 1; i <= 5; i++) {
            kind = order[i]
            if (!(kind in kinds)) continue
            for (t = 0; t < 2; t++) {
                key = kind SUBSEP t
                printf "| %s | %d | %.2f | %s | %+.1f%% | %+.1f%% | %+.1f%% | %d |\n", kind, cnt[key],
                       chars[kind] / toks[kind], name[t], 100 * sum[key] / cnt[key], 100 * lo[key], 100 * hi[key],
                       under[key] + 0
            }
        }
        for (kind in budgets)
            printf "\n%s: %d texts, largest real count %d, %d over the budget\n", kind, budgets[kind],
                   maxreal[kind], over[kind] + 0
    }' "$OUT/joined.tsv"

if [ "$COMMIT" = 1 ]; then
    DEST=tests/fixtures/tokens
    mkdir -p "$DEST"
    rm -f "$DEST"/*.text.txt "$DEST/counts.tsv"
    {
        echo "# file	cl100k_base	o200k_base (js-tiktoken 1.0.21; written by bench/tokens.sh --commit)"
        awk -F'\t' '$1 ~ /\.text\.txt$/ { print $1 "\t" $4 "\t" $5 }' "$OUT/joined.tsv"
    } >"$DEST/counts.tsv"
    awk -F'\t' '$1 ~ /\.text\.txt$/ { print $1 }' "$OUT/joined.tsv" | while read -r f; do
        cp "$OUT/texts/$f" "$DEST/$f"
    done
    echo "wrote $(($(wc -l <"$DEST/counts.tsv") - 1)) texts and their counts to $DEST" >&2
fi
