use super::*;
use crate::expr::ExprInputs;
use crate::tables;

fn x86(name: &str) -> &'static Model {
    let t = tables::all()
        .iter()
        .find(|t| t.kernel == "6.12" && t.arch == "x86")
        .unwrap();
    t.tables.models.iter().find(|m| m.name == name).unwrap()
}

/// A machine: SMT off, the events count whole cores.
fn smt_off() -> ExprInputs {
    let mut machine = ExprInputs::new();
    machine.set_literal(ExprLiteral::SmtOn, 0.0);
    machine.set_literal(ExprLiteral::CoreWide, 1.0);
    machine
}

/// A table of made-up metrics, for what the real ones do not show.
fn table(metrics: &[(&'static str, &'static str, Option<&'static str>)]) -> Model {
    Model {
        name: "test",
        events: Vec::new(),
        metrics: metrics
            .iter()
            .map(|&(name, expr, groups)| {
                &*Box::leak(Box::new(Metric {
                    name,
                    pmu: "default_core",
                    expr,
                    groups,
                    threshold: None,
                    unit: None,
                    desc: None,
                    compat: None,
                    aggr_mode: None,
                    event_grouping: None,
                    no_group_groups: None,
                    default_groups: None,
                }))
            })
            .collect(),
    }
}

#[test]
fn a_metric_by_name_with_its_references_expanded() {
    let machine = smt_off();
    let s = MetricSelection::select(
        x86("skylake"),
        "tma_info_thread_ipc",
        &machine,
        &MetricOptions::new(),
    )
    .unwrap();
    let [ipc] = s.metrics() else {
        panic!("one metric")
    };
    assert_eq!(ipc.name(), "tma_info_thread_ipc");
    assert_eq!(ipc.ids(), ["INST_RETIRED.ANY", "CPU_CLK_UNHALTED.THREAD"]);
    assert_eq!(
        ipc.references().map(|m| m.name).collect::<Vec<_>>(),
        ["tma_info_thread_clks"]
    );
    assert!(ipc.group_events());
    assert_eq!(
        s.events(),
        "{INST_RETIRED.ANY/metric-id=INST_RETIRED.ANY/,\
         CPU_CLK_UNHALTED.THREAD/metric-id=CPU_CLK_UNHALTED.THREAD/}:W"
    );
    let mut counts = machine.clone();
    counts.insert("INST_RETIRED.ANY", 3e9);
    counts.insert("CPU_CLK_UNHALTED.THREAD", 2e9);
    let r = ipc.evaluate(&counts);
    assert_eq!(
        (r.value, r.unit.as_str(), r.threshold),
        (Some(1.5), "", None)
    );
    // The modifier goes on every event and the name.
    let s = MetricSelection::select(
        x86("skylake"),
        "TMA_INFO_THREAD_IPC:u",
        &machine,
        &MetricOptions::new(),
    )
    .unwrap();
    assert_eq!(s.metrics()[0].name(), "tma_info_thread_ipc:u");
    assert_eq!(
        s.events(),
        "{INST_RETIRED.ANY/metric-id=INST_RETIRED.ANY/u,\
         CPU_CLK_UNHALTED.THREAD/metric-id=CPU_CLK_UNHALTED.THREAD/u}:W"
    );
}

#[test]
fn the_machine_s_literals_choose_the_events_and_the_value_is_scaled() {
    let model = x86("skylake");
    let options = MetricOptions::new();
    let machine = smt_off();
    let s = MetricSelection::select(model, "tma_frontend_bound", &machine, &options).unwrap();
    let fe = &s.metrics()[0];
    // SMT off: tma_info_core_core_clks is tma_info_thread_clks.
    assert_eq!(
        fe.ids(),
        ["IDQ_UOPS_NOT_DELIVERED.CORE", "CPU_CLK_UNHALTED.THREAD"]
    );
    assert_eq!(
        fe.references().map(|m| m.name).collect::<Vec<_>>(),
        [
            "tma_frontend_bound",
            "tma_info_thread_slots",
            "tma_info_core_core_clks",
            "tma_info_thread_clks"
        ]
    );
    let mut counts = machine.clone();
    counts.insert("IDQ_UOPS_NOT_DELIVERED.CORE", 4e8);
    counts.insert("CPU_CLK_UNHALTED.THREAD", 1e9);
    // 4e8 / (4 * 1e9) = 0.1, ScaleUnit 100%: 10 %, under the 0.15 threshold.
    let r = fe.evaluate(&counts);
    assert_eq!(
        (r.raw, r.value, r.unit.as_str(), r.threshold),
        (Some(0.1), Some(10.0), "%", Some(false))
    );
    counts.insert("IDQ_UOPS_NOT_DELIVERED.CORE", 8e8);
    assert_eq!(fe.evaluate(&counts).threshold, Some(true));
    // SMT on: the other branch's events.
    let mut machine = ExprInputs::new();
    machine.set_literal(ExprLiteral::SmtOn, 1.0);
    machine.set_literal(ExprLiteral::CoreWide, 0.0);
    let s = MetricSelection::select(model, "tma_frontend_bound", &machine, &options).unwrap();
    assert!(s.metrics()[0]
        .ids()
        .iter()
        .any(|id| id == "CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE"));
    // Without the machine's literals: every branch, and no value.
    let s =
        MetricSelection::select(model, "tma_frontend_bound", &ExprInputs::new(), &options).unwrap();
    let ids = s.metrics()[0].ids();
    assert!(
        ids.iter().any(|id| id == "CPU_CLK_UNHALTED.THREAD_ANY"),
        "{ids:?}"
    );
    let values_only: ExprInputs = [
        ("IDQ_UOPS_NOT_DELIVERED.CORE", 4e8),
        ("CPU_CLK_UNHALTED.THREAD", 1e9),
    ]
    .into_iter()
    .collect();
    // The literal fails the reference that reads it, which perf then
    // reads as NaN.
    assert!(s.metrics()[0]
        .evaluate(&values_only)
        .value
        .unwrap()
        .is_nan());
    // --metric-no-threshold: the same events here.
    let s = MetricSelection::select(
        model,
        "tma_frontend_bound",
        &smt_off(),
        &options.clone().no_threshold(true),
    )
    .unwrap();
    assert_eq!(
        s.metrics()[0].ids(),
        ["IDQ_UOPS_NOT_DELIVERED.CORE", "CPU_CLK_UNHALTED.THREAD"]
    );
}

#[test]
fn a_group_selects_its_metrics_ignoring_case() {
    let model = x86("skylake");
    let machine = smt_off();
    let s = MetricSelection::select(model, "topdownl1", &machine, &MetricOptions::new()).unwrap();
    let mut names: Vec<String> = s.metrics().iter().map(SelectedMetric::name).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "tma_backend_bound",
            "tma_bad_speculation",
            "tma_frontend_bound",
            "tma_retiring"
        ]
    );
    // Skylake's TopdownL1 is MetricgroupNoGroup: one ungrouped list, shared.
    assert_eq!(s.event_lists().len(), 1);
    assert!(!s.event_lists()[0].grouped());
    assert!(s
        .metrics()
        .iter()
        .all(|m| m.event_list() == 0 && !m.group_events()));
    // The most events first.
    let counts: Vec<usize> = s.metrics().iter().map(|m| m.ids().len()).collect();
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");
    // `all` is every metric, ids never name a metric.
    let all = MetricSelection::select(model, "all", &machine, &MetricOptions::new()).unwrap();
    assert_eq!(all.metrics().len(), model.metrics.len());
    for m in all.metrics() {
        for id in m.ids() {
            assert!(
                model.metrics_named(id).next().is_none(),
                "{}: {id}",
                m.name()
            );
        }
    }
    assert_eq!(
        MetricSelection::select(model, "IPC,NoSuchGroup", &machine, &MetricOptions::new())
            .unwrap_err(),
        MetricSelectError::NotFound("IPC".into())
    );
}

#[test]
fn every_metric_of_every_table_is_selectable() {
    let mut selected = 0;
    for t in tables::all() {
        for model in &t.tables.models {
            if model.metrics.is_empty() {
                continue;
            }
            for machine in [ExprInputs::new(), smt_off()] {
                let s = MetricSelection::select(model, "all", &machine, &MetricOptions::new())
                    .unwrap_or_else(|e| panic!("{}: {e}", model.name));
                selected += s.metrics().len();
                for m in s.metrics() {
                    let list = &s.event_lists()[m.event_list()];
                    assert!(
                        m.ids().iter().all(|id| list.ids().contains(id)),
                        "{}",
                        m.name()
                    );
                    let _ = m.evaluate(&machine);
                }
            }
        }
    }
    assert!(selected > 10_000, "{selected}");
}

#[test]
fn a_cycle_is_an_error() {
    let model = table(&[
        ("A", "B + 1", None),
        ("B", "2 * C", None),
        ("C", "A", None),
        ("D", "E", None),
    ]);
    assert_eq!(
        MetricSelection::select(&model, "A", &(), &MetricOptions::new()).unwrap_err(),
        MetricSelectError::Recursion("A".into())
    );
    // A metric named twice through others is one reference.
    let model = table(&[
        ("A", "B + C", Some("G")),
        ("B", "2 * C", None),
        ("C", "X / Y", None),
        ("Z", "d_ratio(X, 0) + W if 0 else 7", Some("g;Other")),
    ]);
    let s = MetricSelection::select(&model, "A", &(), &MetricOptions::new()).unwrap();
    let a = &s.metrics()[0];
    assert_eq!(
        a.references().map(|m| m.name).collect::<Vec<_>>(),
        ["B", "C"]
    );
    assert_eq!(a.ids(), ["X", "Y"]);
    let counts: ExprInputs = [("X", 6.0), ("Y", 3.0)].into_iter().collect();
    // A = B + C = 2 * C + C = 3 * (6 / 3).
    assert_eq!(a.evaluate(&counts).value, Some(6.0));
    // A metric with nothing to count opens duration_time.
    let s = MetricSelection::select(&model, "OTHER", &(), &MetricOptions::new()).unwrap();
    assert_eq!(s.metrics()[0].name(), "Z");
    assert_eq!(s.events(), "duration_time");
    assert_eq!(s.metrics()[0].evaluate(&()).value, Some(7.0));
    // Groups ignore case: `G` is A's and Z's group, and so is `g`; each
    // item adds both, the later item first.
    let s = MetricSelection::select(&model, "G,other", &(), &MetricOptions::new()).unwrap();
    let names: Vec<String> = s.metrics().iter().map(SelectedMetric::name).collect();
    assert_eq!(names, ["A", "Z", "Z"]);
}

#[test]
fn runtime_parameters_and_event_strings() {
    let model = table(&[(
        "chip_bytes",
        "hv_24x7@PM_PB_INT_DATA_XFER\\,chip\\=?@ * 64 / duration_time",
        None,
    )]);
    let options = MetricOptions::new().runtime_count(2);
    let s = MetricSelection::select(&model, "chip_bytes", &(), &options).unwrap();
    let runtimes: Vec<_> = s
        .metrics()
        .iter()
        .map(|m| (m.runtime(), m.ids().to_vec()))
        .collect();
    assert_eq!(
        runtimes,
        [
            (
                Some(1),
                vec![
                    "hv_24x7@PM_PB_INT_DATA_XFER,chip=1@".to_owned(),
                    "duration_time".to_owned()
                ]
            ),
            (
                Some(0),
                vec![
                    "hv_24x7@PM_PB_INT_DATA_XFER,chip=0@".to_owned(),
                    "duration_time".to_owned()
                ]
            ),
        ]
    );
    assert_eq!(
        s.event_lists()[0].events(),
        "{hv_24x7/PM_PB_INT_DATA_XFER,chip=1,metric-id=hv_24x7!3PM_PB_INT_DATA_XFER!0chip!21!3/}:W,duration_time"
    );
    let mut counts = ExprInputs::new();
    counts.insert("hv_24x7@PM_PB_INT_DATA_XFER,chip=0@", 1e6);
    counts.insert("duration_time", 2.0);
    assert_eq!(s.metrics()[1].evaluate(&counts).value, Some(32e6));

    // perf's own example (metricgroup.c) and a modifier in the id.
    assert_eq!(
        metric_event("msr@tsc@", None),
        "msr/tsc,metric-id=msr!3tsc!3/"
    );
    assert_eq!(
        metric_event("CPU_CLK_UNHALTED.THREAD_P:k", None),
        "CPU_CLK_UNHALTED.THREAD_P/metric-id=CPU_CLK_UNHALTED.THREAD_P:k/k"
    );
    assert_eq!(
        metric_event("cpu_core@topdown-fe-bound@", Some("u")),
        "cpu_core/topdown-fe-bound,metric-id=cpu_core!3topdown!1fe!1bound!3/u"
    );
    assert_eq!(metric_event("duration_time", Some("u")), "duration_time");
}

#[test]
fn scale_units_split_as_strtod() {
    for (text, scale, unit) in [
        ("100%", 100.0, "%"),
        ("1GHz", 1.0, "GHz"),
        ("9.765625e-4KB", 9.765625e-4, "KB"),
        ("1e3per_1k_instr", 1e3, "per_1k_instr"),
        ("6.103515625E-5MB/sec", 6.103515625e-5, "MB/sec"),
        ("1percent of slots", 1.0, "percent of slots"),
        ("4", 4.0, ""),
        ("%", 0.0, "%"),
        ("1.e", 1.0, "e"),
    ] {
        assert_eq!(
            ScaleUnit::parse(text),
            ScaleUnit {
                scale,
                unit: unit.into()
            },
            "{text}"
        );
    }
}
