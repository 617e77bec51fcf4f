#!/usr/bin/env bash
# The demo behind `make demo`: kubectl-dra on the bundled demo cluster state, offline.
# Every command here is what you would type against a live cluster, minus --state.
set -uo pipefail
cd "$(dirname "$0")/.."
STATE=kubectl_dra/demo/cluster.yaml
CLAIMS=kubectl_dra/demo/claims

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

echo "Demo cluster: $STATE (4 nodes, partitionable GPUs, NICs, a shared fabric pool, running and pending pods)"
step kubectl-dra preview --state "$STATE" -n ml-team -f "$CLAIMS/03-gpu-nic-aligned.yaml"
step kubectl-dra preview --state "$STATE" -n ml-team -f "$CLAIMS/02-mig-slices.yaml" -o wide
step kubectl-dra preview --state "$STATE" -n ml-team -f "$CLAIMS/04-fabric-bandwidth.yaml"
step kubectl-dra explain --state "$STATE" -n ml-team -f "$CLAIMS/09-does-not-fit.yaml"
step kubectl-dra explain --state "$STATE" -n ml-team pod/trainer-4
step kubectl-dra preview --state "$STATE" -n ml-team pod/serve-2
step kubectl-dra fit --state "$STATE" -n ml-team -f "$CLAIMS/02-mig-slices.yaml" -o wide
step kubectl-dra usage --state "$STATE"
step kubectl-dra pending -A --state "$STATE"
step kubectl-dra drain-check gpu-node-1 --state "$STATE"
step kubectl-dra drain-check gpu-node-1 gpu-node-3 --state "$STATE" --add-nodes gpu-node-3=1
step kubectl-dra validate -f "$CLAIMS/03-gpu-nic-aligned.yaml"
step kubectl-dra metadata --dir examples/metadata
step kubectl-dra metadata --dir examples/metadata --check
echo
echo "Exit codes: preview/explain/fit 0 = fits somewhere, 1 = fits nowhere; validate 1 = invalid;"
echo "pending 1 = some pending pod cannot be placed now; drain-check 1 = some pod would have nowhere to go."
exit 0
