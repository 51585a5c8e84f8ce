#!/usr/bin/env bash
# The slurm tier's system packages (issue 48): Debian's slurm-wlm (slurmctld, slurmd and the sbatch,
# squeue, sacct, scontrol, scancel commands) and munge. Needs root and apt; idempotent. Nothing is
# configured or started here: the tier's fixture (tests/slurm_cluster.py) writes a one-node cluster
# of its own into a temporary folder, starts its daemons on 127.0.0.1 and stops them afterwards.
set -euo pipefail
missing=()
for command in slurmctld slurmd sbatch scontrol munged; do
  command -v "$command" >/dev/null 2>&1 || missing+=("$command")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "setup-slurm: slurm-wlm and munge are installed (slurm-wlm $(dpkg-query -W -f '${Version}' slurm-wlm 2>/dev/null))"
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "setup-slurm: ${missing[*]} missing; install slurm-wlm and munge as root (apt-get install slurm-wlm munge)" >&2
  exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
echo "setup-slurm: installed slurm-wlm and munge"
