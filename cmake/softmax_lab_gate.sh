#!/bin/sh
# softmax_lab_gate.sh CLI PLUGIN KERNEL DEVICE CLAIM -- COMMAND [ARG...]
#
# One test of softmax_lab_add_gate (SoftmaxLabGate.cmake). Before running COMMAND it asks
# `CLI list --load PLUGIN --json` for KERNEL and fails when the plugin does not register it,
# when it runs on another device than the gate declares (DEVICE: cpu or gpu), or when CLAIM
# (">=1.20x cudnn (long)" or none, as `list` prints it) is not the kernel's claim. It prints
# the kernel's declared deviation, if any.
# A GPU kernel on a host without a GPU exits 77 (ctest: skipped). Otherwise COMMAND's exit
# code is the test's.
set -u
if [ $# -lt 6 ] || [ "$6" != "--" ]; then
    echo "usage: $0 CLI PLUGIN KERNEL cpu|gpu CLAIM -- COMMAND [ARG...]" >&2
    exit 2
fi
cli=$1 plugin=$2 kernel=$3 device=$4 claim=$5
shift 6

listing=$("$cli" list --load "$plugin" --json) || {
    echo "FAIL: $cli list --load $plugin --json failed" >&2
    exit 1
}
line=$(printf '%s\n' "$listing" | grep -F "\"name\": \"$kernel\",")
if [ -z "$line" ]; then
    echo "FAIL: $plugin registers no kernel '$kernel' (see: $cli list --load $plugin)" >&2
    exit 1
fi
field() { printf '%s\n' "$line" | sed -n "s/.*\"$1\": \"\\([^\"]*\\)\".*/\\1/p"; }
got_device=$(field device)
if [ "$got_device" != "$device" ]; then
    echo "FAIL: kernel '$kernel' of $plugin runs on the $got_device, but its gate says $device" >&2
    exit 1
fi
if [ "$(field claim)" != "$claim" ]; then
    echo "FAIL: kernel '$kernel' of $plugin claims '$(field claim)', its gate says '$claim'" >&2
    exit 1
fi
# A declared deviation is applied as a looser bound (the verdict lines name it); --strict
# (STRICT) holds the kernel to the contract itself.
deviation=$(field deviation)
if [ -n "$deviation" ]; then
    case " $* " in
    *" --strict "*) echo "kernel '$kernel' declares a deviation from the contract ($deviation); STRICT: not applied" ;;
    *) echo "kernel '$kernel' declares a deviation from the contract, held to it as a looser bound: $deviation" ;;
    esac
fi
if [ "$device" = gpu ] && [ "$(field status)" = "no GPU" ]; then
    echo "skipped: no GPU for kernel '$kernel'"
    exit 77
fi
echo "$*"
exec "$@"
