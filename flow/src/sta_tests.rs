//! Tests of the static timing (sta.rs).
use super::*;

/// Two registers (posedge), a LUT and a combinational multiplier between them, one
/// falling-edge RAM read: every number below is worked out by hand from the delays.
const SDF: &str = r#"(DELAYFILE (SDFVERSION "3.0") (TIMESCALE 1ps)
  (CELL (CELLTYPE "top") (INSTANCE )
    (DELAY (ABSOLUTE
      (INTERCONNECT r1/O lut/I0 (1000:1000:1000) (1000:1000:1000))
      (INTERCONNECT lut/O m_DSP/A_0 (2000:2000:2000) (2000:2000:2000))
      (INTERCONNECT m_DSP/O_0 r2/I1 (500:500:500) (600:600:600))
      (INTERCONNECT ram/RDATA_0 r2/I2 (300:300:300) (300:300:300)))))
  (CELL (CELLTYPE "ICESTORM_LC") (INSTANCE r1)
    (DELAY (ABSOLUTE (IOPATH CLK O (1400:1400:1400) (1400:1400:1400))))
    (TIMINGCHECK (SETUPHOLD (posedge I0) (posedge CLK) (1200:1200:1200) (0:0:0))))
  (CELL (CELLTYPE "ICESTORM_LC") (INSTANCE lut)
    (DELAY (ABSOLUTE (IOPATH I0 O (800:800:800) (900:900:900)))))
  (CELL (CELLTYPE "ICESTORM_DSP") (INSTANCE m_DSP)
    (DELAY (ABSOLUTE (IOPATH CLK O_0 (100:100:100) (100:100:100))))
    (TIMINGCHECK (SETUPHOLD (posedge A_0) (posedge CLK) (100:100:100) (0:0:0))))
  (CELL (CELLTYPE "ICESTORM_RAM") (INSTANCE ram)
    (DELAY (ABSOLUTE (IOPATH RCLK RDATA_0 (1200:1200:1200) (1200:1200:1200))))
    (TIMINGCHECK (SETUPHOLD (posedge RADDR_0) (negedge RCLK) (100:100:100) (0:0:0))))
  (CELL (CELLTYPE "ICESTORM_LC") (INSTANCE r2)
    (TIMINGCHECK (SETUPHOLD (posedge I1) (posedge CLK) (1000:1000:1000) (0:0:0))
                 (SETUPHOLD (posedge I2) (posedge CLK) (900:900:900) (0:0:0)))))"#;

#[test]
fn nextpnr_view_splits_the_path_at_the_multiplier() {
    // the multiplier with its registers off is not timed at all; with its A input
    // registered, the path into it ends there: 1400 + 1000 + 900 + 2000 + 100 setup
    let r = analyse(SDF, &DspModel::Nextpnr { macs: macs(&[]) }).unwrap();
    // left: r1 → r1 (none), the half-cycle RAM read 2 · (1200 + 300 + 900) = 4800 ps
    assert!((r.period_ns - 4.8).abs() < 1e-9, "{r:?}");
    let r = analyse(SDF, &DspModel::Nextpnr { macs: macs(&['A']) }).unwrap();
    assert!((r.period_ns - 5.4).abs() < 1e-9, "{r:?}");
    assert_eq!(r.worst_through_multiplier_ns, None);
}

#[test]
fn combinational_multiplier_joins_the_path() {
    let arcs = vec![("A_0".to_string(), "O_0".to_string(), 9000.0)];
    let dsp = DspModel::Multiplier {
        arcs: arcs.clone(),
        macs: macs(&[]),
    };
    let r = analyse(SDF, &dsp).unwrap();
    // 1400 + 1000 + 900 + 2000 + 9000 + 600 + 1000 = 15900 ps
    assert!((r.period_ns - 15.9).abs() < 1e-9, "{r:?}");
    assert_eq!(r.worst_through_multiplier_ns, Some(r.period_ns));
    let names: Vec<&str> = r.critical_path.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(
        names,
        ["r1/O", "lut/I0", "lut/O", "m_DSP/A_0", "m_DSP/O_0", "r2/I1"]
    );
    assert_eq!((r.launch, r.capture), ("posedge", "posedge"));
    // A registered: 5400 ps into the register, 9000 + 600 + 1000 out of it
    let r = analyse(
        SDF,
        &DspModel::Multiplier {
            arcs,
            macs: macs(&['A']),
        },
    )
    .unwrap();
    assert!((r.period_ns - 10.6).abs() < 1e-9, "{r:?}");
}

#[test]
fn an_output_register_is_reached_through_the_multiply() {
    let arcs = vec![("A_0".to_string(), "O_0".to_string(), 9000.0)];
    let mut m = macs(&[]);
    m.get_mut("m_DSP").unwrap().internal = true;
    let r = analyse(
        SDF,
        &DspModel::Multiplier {
            arcs: arcs.clone(),
            macs: m.clone(),
        },
    )
    .unwrap();
    // into the output register: 1400 + 1000 + 900 + 2000 + 100 setup + 9000 multiply;
    // out of it only 100 + 600 + 1000
    assert!((r.period_ns - 14.4).abs() < 1e-9, "{r:?}");
    assert_eq!(r.worst_through_multiplier_ns, Some(r.period_ns));
    // A in its input register too: 5400 ps into it, the 9000 ps multiply inside the cell
    m.get_mut("m_DSP").unwrap().inputs = vec!['A'];
    let r = analyse(SDF, &DspModel::Multiplier { arcs, macs: m }).unwrap();
    assert!((r.period_ns - 9.0).abs() < 1e-9, "{r:?}");
    // nextpnr's view of either stops at the cell's ports: 5400 ps
    let mut m = macs(&[]);
    m.get_mut("m_DSP").unwrap().internal = true;
    let r = analyse(SDF, &DspModel::Nextpnr { macs: m }).unwrap();
    assert!((r.period_ns - 5.4).abs() < 1e-9, "{r:?}");
}

fn macs(inputs: &[char]) -> HashMap<String, MacRegisters> {
    let m = MacRegisters {
        inputs: inputs.to_vec(),
        internal: false,
    };
    [("m_DSP".to_string(), m)].into_iter().collect()
}

#[test]
fn a_falling_edge_launch_has_half_the_clock() {
    let sdf = SDF.replace(
        "RDATA_0 r2/I2 (300:300:300) (300:300:300)",
        "RDATA_0 r2/I2 (4000:4000:4000) (4000:4000:4000)",
    );
    let r = analyse(&sdf, &DspModel::Nextpnr { macs: macs(&[]) }).unwrap();
    // 2 · (1200 + 4000 + 900) = 12200 ps
    assert!((r.period_ns - 12.2).abs() < 1e-9, "{r:?}");
    assert_eq!((r.launch, r.capture), ("negedge", "posedge"));
}

#[test]
fn database_arcs_and_combinational_macs_are_read() {
    let db = "CELL X\nIOPATH A[0] O[0] 1:2:3 1:2:4\nCELL SB_MAC16_MUL_S_16X16_BYPASS\n\
              IOPATH  A[1]  O[31]  3359.5:5873.8:9049.7  3343.8:5846.4:9007.5\n";
    let arcs = cell_arcs(db, "SB_MAC16_MUL_S_16X16_BYPASS").unwrap();
    assert_eq!(arcs, vec![("A_1".to_string(), "O_31".to_string(), 9049.7)]);
    assert!(cell_arcs(db, "NOPE").is_err());
    let j = r#"{"modules":{"top":{"cells":{
        "m":{"type":"SB_MAC16","parameters":{"A_REG":"0","TOPOUTPUT_SELECT":"00"}},
        "r":{"type":"SB_MAC16","parameters":{"A_REG":"1","TOPOUTPUT_SELECT":"00"}},
        "o":{"type":"SB_MAC16","parameters":{"A_REG":"0","TOPOUTPUT_SELECT":"01"}},
        "l":{"type":"SB_LUT4","parameters":{}}}}}}"#;
    let c = mac_registers(j).unwrap();
    assert_eq!(c["m_DSP"], MacRegisters::default());
    assert_eq!(
        c["r_DSP"],
        MacRegisters {
            inputs: vec!['A'],
            internal: false
        }
    );
    assert_eq!(
        c["o_DSP"],
        MacRegisters {
            inputs: vec![],
            internal: true
        }
    );
    assert_eq!(c.len(), 3);
}

#[test]
fn the_installed_database_has_the_multiplier() {
    let Ok(p) = timing_db("up5k") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "fpga-icestorm's timing database is missing under CI"
        );
        eprintln!("skipped: no icestorm timing database");
        return;
    };
    let arcs = cell_arcs(
        &std::fs::read_to_string(p).unwrap(),
        "SB_MAC16_MUL_S_16X16_BYPASS",
    )
    .unwrap();
    let worst = arcs.iter().map(|a| a.2).fold(0.0, f64::max);
    // a 16×16 multiply through the UP5K's MAC16 takes several ns at the slow corner
    assert!(worst > 5000.0 && worst < 20000.0, "{worst}");
}
