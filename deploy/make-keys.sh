#!/usr/bin/env bash
# Makes the CURVE keys of a farm (docs/security.md) in the layout the
# deployment files expect, with `profeed keygen`:
#
#   DIR/broker.key_secret, broker.key          the broker's certificate
#   DIR/collector.key_secret, analyzer.key_secret   one per worker role
#   DIR/agent.key_secret, probe.key_secret     an agent's, and the health probes'
#   DIR/agents/{agent,probe}.key               the broker's allowlists, per role
#   DIR/collectors/collector.key
#   DIR/analyzers/analyzer.key
#
#   deploy/make-keys.sh deploy/docker/keys     for docker compose
#   deploy/make-keys.sh keys --k8s             also prints the kubectl command
#                                              that loads them as the Secret
# More agents: `profeed keygen NAME --dir DIR`, then copy DIR/NAME.key into
# DIR/agents/ (the broker rereads the folder). Existing keys are kept.
set -euo pipefail
[ "${1:-}" = -h ] || [ "${1:-}" = --help ] && { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
[ $# -ge 1 ] || { echo "usage: deploy/make-keys.sh DIR [--k8s]" >&2; exit 2; }
dir=$1
k8s=${2:-}
here=$(cd "$(dirname "$0")/.." && pwd)
profeed=${PROFEED:-}
if [ -z "$profeed" ]; then
  for p in "$here/build/client/profeed" "$(command -v profeed || true)"; do
    [ -n "$p" ] && [ -x "$p" ] && { profeed=$p; break; }
  done
fi
[ -n "$profeed" ] || { echo "make-keys.sh: no profeed binary (build first, or set PROFEED=...)" >&2; exit 1; }

mkdir -p "$dir/agents" "$dir/collectors" "$dir/analyzers"
for name in broker collector analyzer agent probe; do
  if [ -e "$dir/$name.key_secret" ]; then
    echo "kept    $dir/$name.key_secret"
  else
    "$profeed" keygen "$name" --dir "$dir"
  fi
done
cp "$dir/agent.key" "$dir/probe.key" "$dir/agents/"
cp "$dir/collector.key" "$dir/collectors/"
cp "$dir/analyzer.key" "$dir/analyzers/"
echo "allowlists: $dir/agents (agent, probe), $dir/collectors (collector), $dir/analyzers (analyzer)"
if [ "$k8s" = --k8s ]; then
  echo
  echo "Load them into the cluster (replaces deploy/k8s/secret.yaml's placeholders):"
  echo "  kubectl -n profeed create secret generic profeed-curve-keys \\"
  for f in broker.key_secret broker.key collector.key_secret collector.key analyzer.key_secret analyzer.key \
           probe.key_secret probe.key agent.key; do
    echo "    --from-file=$dir/$f \\"
  done
  echo "    --dry-run=client -o yaml | kubectl apply -f -"
fi
