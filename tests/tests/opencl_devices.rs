//! Several OpenCL devices standing in for several boards: PoCL makes two CPU devices when
//! `POCL_DEVICES="pthread pthread"`, and a chain of two stages, one per device, trains exactly
//! like the reference model with the chain's staleness. Its own test binary, so the variable
//! is set before anything in the process loads OpenCL.

use edgeflow_core::{JunctionPattern, State};
use edgeflow_opencl::{devices, Device, OpenClStage, Schedule};
use edgeflow_reference::Reference;
use edgeflow_tests::random_spec::{random_data, random_spec};

#[test]
fn two_devices_two_stages_bit_exact() {
    if std::env::var_os("POCL_DEVICES").is_none() {
        std::env::set_var("POCL_DEVICES", "pthread pthread");
    }
    let list = match devices() {
        Ok(l) if !l.is_empty() => l,
        other => {
            let e = other.err().map(|e| format!("{e:#}")).unwrap_or_else(|| {
                edgeflow_opencl::no_runtime_error("the OpenCL runtime reports no device")
                    .to_string()
            });
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("CI=true but no OpenCL device: {e}");
            }
            eprintln!("skipping: {e}");
            return;
        }
    };
    // without PoCL (another driver) there may be one device: both stages share it then
    let second = if list.len() > 1 { "1" } else { "0" };
    eprintln!(
        "upstream stage on device 0, downstream on device {second}, of {}",
        list.len()
    );
    let d0 = Device::open(Some("0")).unwrap();
    let d1 = Device::open(Some(second)).unwrap();
    let spec = random_spec(17); // 4 junctions
    let l = spec.junctions();
    let cut = 2;
    let delay = 2;
    let mut links = vec![0; l - 1];
    links[cut - 1] = delay;
    let schedule = Schedule::with_links(&links);
    let data = random_data(&spec, 150, 77);
    let mut stages = [
        OpenClStage::new(d0, &spec, 0..cut, &schedule).unwrap(),
        OpenClStage::new(d1, &spec, cut..l, &schedule).unwrap(),
    ];
    edgeflow_tests::chain::train_stream(&mut stages, &data, delay + 1);
    let [up, down] = &mut stages;
    let mut got = State::initial(&spec);
    up.read_state(&mut got).unwrap();
    down.read_state(&mut got).unwrap();
    let mut r = Reference::with_state(&spec, State::initial(&spec), schedule.staleness()).unwrap();
    r.train(&data);
    assert_eq!(
        r.state.sha256(),
        got.sha256(),
        "devices {} and {second}: {}",
        list[0].name,
        r.state
            .first_difference(&got, Some(&JunctionPattern::all(&spec)))
            .unwrap_or_default()
    );
    // the downstream stage infers from the upstream stage's activations like the reference
    let h = up.infer(&data.inputs).unwrap();
    let out = down.infer(&h).unwrap();
    let want: Vec<i32> = (0..data.len())
        .flat_map(|n| r.forward(data.input(n)))
        .collect();
    assert_eq!(out, want);
}
