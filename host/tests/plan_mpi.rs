//! `mpirun -np K edgeflow train --plan …`: one MPI rank per stage of the plan, on this machine
//! over the loopback interface only. The MPI run gives the bits of the one-process run of the
//! same plan and of the reference model with the plan's staleness (`--verify` on rank 0), for
//! `specs/mnist-large.toml` on four ranks (reference arithmetic and PoCL devices), for a small
//! spec on three simulated RTL stages, and for that spec with stochastic rounding over three
//! epochs (reference and PoCL). A rank that dies or whose board fails ends every
//! rank within the time limit, with a message naming its rank, host and stage, and no model.
//!
//! Needs the `mpi` feature and Open MPI (./test.sh installs and enables both); under CI=true
//! their absence fails the tests.

mod common;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

/// Whether MPI runs can be tested here; under CI=true a missing piece fails instead.
fn can_run() -> bool {
    if !cfg!(feature = "mpi") {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI=true but edgeflow was built without the mpi feature (./test.sh enables it)");
        }
        eprintln!("skipping: built without the mpi feature");
        return false;
    }
    common::have("mpirun", "openmpi-bin")
}

/// `mpirun -np NP edgeflow ARGS` on this machine over loopback, killed after `limit`: None
/// if it had to be killed (a hung rank).
fn mpirun(np: usize, args: &[&str], env: &[(&str, &str)], limit: Duration) -> Option<Output> {
    let np = np.to_string();
    let mut c = Command::new("mpirun");
    c.args(["--oversubscribe", "-np", &np])
        .args([
            "--mca",
            "btl",
            "self,tcp",
            "--mca",
            "btl_tcp_if_include",
            "lo",
        ])
        .args(["--mca", "oob_tcp_if_include", "lo"])
        .arg(env!("CARGO_BIN_EXE_edgeflow"))
        .args(args)
        // the test may run as root (containers); Open MPI refuses that unless told
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("POCL_DEVICES", "pthread pthread pthread pthread")
        .envs(env.iter().copied())
        .current_dir(common::root());
    common::output_within(c, limit)
}

fn json(what: &str, o: &Output) -> Value {
    assert!(
        o.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{what}: not JSON ({e}): {}",
            String::from_utf8_lossy(&o.stdout)
        )
    })
}

fn plan(dir: &Path, spec: &str, boards: &str) -> String {
    let p = dir.join("plan.json").to_str().unwrap().to_string();
    common::ok_json(&[
        "plan", "--spec", spec, "--boards", boards, "-o", &p, "--json",
    ]);
    p
}

/// The tests' small chain, planned across its three boards: directory, plan, data.
fn toy_plan(tag: &str) -> (std::path::PathBuf, String, String) {
    let dir = common::tmpdir(tag);
    let (spec, boards, data) = common::toy_chain(&dir);
    let p = plan(&dir, &spec, &boards);
    (dir, p, data)
}

const LIMIT: Duration = Duration::from_secs(300);

/// The same bits as the one-process runtime: state, accuracies (the predictions that came
/// back to rank 0) and the reference model with the plan's staleness.
fn same_as_one_process(one: &Value, mpi: &Value, ranks: usize) {
    assert_eq!(
        mpi["state_sha256"], one["state_sha256"],
        "MPI {mpi}\none process {one}"
    );
    assert_eq!(mpi["state_sha256"], mpi["reference_sha256"], "{mpi}");
    for k in ["train_accuracy", "test_accuracy", "staleness"] {
        assert_eq!(mpi[k], one[k], "{k}");
    }
    assert!(
        mpi["backend"]
            .as_str()
            .unwrap()
            .ends_with(&format!("x{ranks} MPI ranks")),
        "{mpi}"
    );
    // every rank's stage timing came back to rank 0
    for s in mpi["stages"].as_array().unwrap() {
        assert!(s["measured_block_cycles"].as_u64().unwrap() > 0, "{s}");
    }
}

#[test]
fn mnist_large_on_four_ranks_gives_the_one_process_bits() {
    if !can_run() {
        return;
    }
    let dir = common::tmpdir("plan-mpi-large");
    let p = plan(&dir, "specs/mnist-large.toml", "opencl-devicex4");
    let base = ["train", "--plan", &p, "--epochs", "1", "--json"];
    let with = |extra: &[&'static str]| [&base[..], extra].concat();
    let one = common::ok_json(&with(&["--backend", "reference"]));
    let o = mpirun(
        4,
        &with(&["--backend", "reference", "--verify"]),
        &[],
        LIMIT,
    )
    .expect("hung");
    same_as_one_process(&one, &json("reference on 4 ranks", &o), 4);
    let o = mpirun(4, &with(&["--backend", "opencl", "--verify"]), &[], LIMIT).expect("hung");
    let err = String::from_utf8_lossy(&o.stderr);
    if !o.status.success() && err.contains("OpenCL") && std::env::var("CI").as_deref() != Ok("true")
    {
        eprintln!("skipping the OpenCL run: {err}");
    } else {
        same_as_one_process(&one, &json("opencl on 4 ranks", &o), 4);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn small_spec_on_three_rtl_ranks_gives_the_one_process_bits() {
    if !can_run() {
        return;
    }
    let (dir, p, data) = toy_plan("plan-mpi-rtl");
    let args = [
        "train",
        "--plan",
        &p,
        "--backend",
        "rtl",
        "--data",
        &data,
        "--epochs",
        "2",
        "--json",
    ];
    let one = common::ok_json(&args);
    let with_verify = [&args[..], &["--verify"]].concat();
    let o = mpirun(3, &with_verify, &[], LIMIT).expect("hung");
    let mpi = json("rtl on 3 ranks", &o);
    same_as_one_process(&one, &mpi, 3);
    // each rank's simulated block cycle came back, as the one-process run measures it
    for (a, b) in mpi["stages"]
        .as_array()
        .unwrap()
        .iter()
        .zip(one["stages"].as_array().unwrap())
    {
        assert_eq!(
            a["measured_clocks_per_block_cycle"],
            b["measured_clocks_per_block_cycle"]
        );
        assert_eq!(a["measured_block_cycles"], b["measured_block_cycles"]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Stochastic rounding: each rank keeps its junctions' lane streams, which run on from one
/// epoch's stream to the next, as in one process (reference arithmetic and PoCL devices).
#[test]
fn stochastic_lanes_run_on_across_streams_on_every_rank() {
    if !can_run() {
        return;
    }
    let (dir, _, data) = toy_plan("plan-mpi-stochastic");
    let spec = dir.join("s.toml");
    let text = std::fs::read_to_string(&spec).unwrap();
    let stochastic = dir.join("stochastic.toml");
    std::fs::write(
        &stochastic,
        text.replace("activation = ", "rounding = \"stochastic\"\nactivation = "),
    )
    .unwrap();
    let (_, boards, _) = common::toy_chain(&dir);
    let p = plan(&dir, stochastic.to_str().unwrap(), &boards);
    for backend in ["reference", "opencl"] {
        let args = [
            "train",
            "--plan",
            &p,
            "--backend",
            backend,
            "--data",
            &data,
            "--epochs",
            "3",
            "--json",
        ];
        let pocl = [("POCL_DEVICES", "pthread pthread pthread pthread")];
        let one = common::json_of(&args, common::edgeflow_env(&args, &pocl));
        let o = mpirun(3, &[&args[..], &["--verify"]].concat(), &[], LIMIT).expect("hung");
        same_as_one_process(&one, &json(backend, &o), 3);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A rank killed in the middle of a stream, or whose board fails: every rank ends within
/// seconds (well inside the limit), mpirun fails, the messages name the rank, its host and
/// its stage, and no model file (nor a temporary one) is left.
#[test]
fn a_dead_rank_or_failed_board_ends_every_rank_without_a_model() {
    if !can_run() {
        return;
    }
    let (dir, p, data) = toy_plan("plan-mpi-fault");
    let model = dir.join("m.model");
    let args = [
        "train",
        "--plan",
        &p,
        "--backend",
        "reference",
        "--data",
        &data,
        "--epochs",
        "30",
        "--out",
        model.to_str().unwrap(),
    ];
    let host = Command::new("hostname").output().unwrap();
    let host = String::from_utf8_lossy(&host.stdout).trim().to_string();
    for (fault, rank, stage) in [("1:20:kill", 1, 2), ("2:20:error", 2, 3)] {
        let t0 = std::time::Instant::now();
        let o = mpirun(
            3,
            &args,
            &[("EDGEFLOW_TEST_RANK_FAULT", fault)],
            Duration::from_secs(60),
        )
        .unwrap_or_else(|| panic!("{fault}: a rank hung"));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{fault}: {err}");
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "{fault}: {:?}",
            t0.elapsed()
        );
        let names = format!("stage {stage} of 3");
        assert!(err.contains(&format!("rank {rank}")), "{fault}: {err}");
        assert!(err.contains(&host), "{fault}: {err}");
        assert!(err.contains(&names), "{fault}: {err}");
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .filter(|n| n.contains("m.model"))
            .collect();
        assert!(left.is_empty(), "{fault}: {left:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The plan's stage count and the number of ranks must agree; every rank ends with the message.
#[test]
fn a_rank_count_other_than_the_stage_count_is_refused() {
    if !can_run() {
        return;
    }
    let (dir, p, data) = toy_plan("plan-mpi-count");
    let args = [
        "train",
        "--plan",
        &p,
        "--backend",
        "reference",
        "--data",
        &data,
        "--epochs",
        "1",
    ];
    let o = mpirun(2, &args, &[], Duration::from_secs(60)).expect("a rank hung");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("the plan has 3 stages but mpirun started 2 ranks"),
        "{err}"
    );
    assert!(err.contains("mpirun -np 3"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
