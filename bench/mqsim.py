#!/usr/bin/env python3
"""MQSim's workloads as iosteer runs, and both simulators' results (vs-mqsim.sh).

  mqsim.py plan WORKLOAD.xml TREE OUTDIR   one MQSim workload file and one
      iosteer argument file per scenario, for every scenario of WORKLOAD.xml
      and every TREE/traces/*.trace no scenario replays; prints the names
  mqsim.py mqsim REPORT.xml                requests, mean read, write, all us
  mqsim.py mqsim-notes REPORT.xml          MQSim's map-cache misses, GC runs, flash waits
  mqsim.py iosteer REPORT.json             requests, mean read, write, all us
  mqsim.py iosteer-notes REPORT.json       our start state, GC moves, reads' waits
  mqsim.py time TIME.log                   wall s, CPU s, peak KB (/usr/bin/time -v)

Standard library only. A flow setting the translation cannot carry over is
an error naming it, not a silent default.
"""
import copy
import glob
import os
import re
import sys
import xml.etree.ElementTree as ET

SECTOR = 512
# Occupancy of the traces the workload does not replay: MQSim's own trace
# scenario's (workload.xml, scenario 3).
TRACE_OCCUPANCY = 70


def fail(message):
    sys.exit(f"vs-mqsim: {message}")


def text(flow, name, default=None):
    node = flow.find(name)
    if node is None or node.text is None:
        if default is None:
            fail(f"{flow.tag}: no <{name}>")
        return default
    return node.text.strip()


def synthetic_job(flows, name):
    """The fio job file of a scenario's synthetic flows: one job per flow."""
    lines = [f"; MQSim {name}: its synthetic flows, one job each"]
    runtime = None
    for i, flow in enumerate(flows):
        kind = text(flow, "Synthetic_Generator_Type")
        if kind != "QUEUE_DEPTH":
            fail(f"{name}, flow {i}: Synthetic_Generator_Type {kind} (QUEUE_DEPTH only)")
        dist = text(flow, "Address_Distribution")
        if dist not in ("RANDOM_UNIFORM", "STREAMING"):
            fail(f"{name}, flow {i}: Address_Distribution {dist} (RANDOM_UNIFORM, STREAMING)")
        if text(flow, "Request_Size_Distribution") != "FIXED":
            fail(f"{name}, flow {i}: Request_Size_Distribution (FIXED only)")
        if text(flow, "Total_Requests_To_Generate", "0") != "0":
            fail(f"{name}, flow {i}: Total_Requests_To_Generate (0 only: runs to Stop_Time)")
        reads = int(text(flow, "Read_Percentage"))
        random = dist == "RANDOM_UNIFORM"
        rw = {0: "randwrite", 100: "randread"}.get(reads, "randrw") if random else \
            {0: "write", 100: "read"}.get(reads, "rw")
        stop_ns = int(text(flow, "Stop_Time"))
        runtime = stop_ns if runtime is None else max(runtime, stop_ns)
        lines += [
            f"[flow{i}]",
            "ioengine=libaio",
            f"rw={rw}",
            f"rwmixread={reads}",
            f"bs={int(text(flow, 'Average_Request_Size')) * SECTOR}",
            f"size={text(flow, 'Working_Set_Percentage')}%",
            f"iodepth={text(flow, 'Average_No_of_Reqs_in_Queue')}",
            f"runtime={stop_ns // 1000}us",
            "time_based",
        ]
    return "\n".join(lines) + "\n"


def trace_args(flow, tree):
    path = text(flow, "File_Path")
    path = path if os.path.isabs(path) else os.path.join(tree, path)
    unit = {"NANOSECOND": "ns", "MICROSECOND": "us", "MILLISECOND": "ms"}.get(
        text(flow, "Time_Unit", "NANOSECOND"))
    if unit is None:
        fail(f"{path}: Time_Unit {text(flow, 'Time_Unit')} (NANOSECOND, MICROSECOND, MILLISECOND)")
    if text(flow, "Percentage_To_Be_Executed", "100") != "100" or text(flow, "Relay_Count", "1") != "1":
        fail(f"{path}: Percentage_To_Be_Executed 100 and Relay_Count 1 only")
    # MQSim wraps addresses past the end of the drive (IO_Flow_Trace_Based.cpp).
    return ["--trace", path, "--trace-format", "ascii", "--trace-unit", unit, "--trace-fit", "wrap"]


def occupancy(flows):
    return max(int(text(f, "Initial_Occupancy_Percentage")) for f in flows)


def plan(workload, tree, outdir):
    root = ET.parse(workload).getroot()
    scenarios = list(root.iter("IO_Scenario"))
    replayed = set()
    names = []

    def emit(name, scenario, args, occ):
        out = ET.Element("MQSim_IO_Scenarios")
        out.append(scenario)
        ET.ElementTree(out).write(os.path.join(outdir, f"{name}.xml"), encoding="us-ascii",
                                  xml_declaration=True)
        with open(os.path.join(outdir, f"{name}.args"), "w") as f:
            f.write("\n".join(args + ["--precondition", f"fill={occ}"]) + "\n")
        names.append(name)

    for n, scenario in enumerate(scenarios, 1):
        synthetic = scenario.findall("IO_Flow_Parameter_Set_Synthetic")
        traces = scenario.findall("IO_Flow_Parameter_Set_Trace_Based")
        name = f"scenario{n}"
        if synthetic and traces or len(traces) > 1:
            fail(f"scenario {n}: one trace flow, or synthetic flows only")
        if synthetic:
            job = os.path.join(outdir, f"{name}.fio")
            with open(job, "w") as f:
                f.write(synthetic_job(synthetic, name))
            emit(name, scenario, ["--job", job], occupancy(synthetic))
        else:
            path = text(traces[0], "File_Path")
            replayed.add(os.path.basename(path))
            name += "-" + os.path.basename(path).removesuffix(".trace")
            emit(name, scenario, trace_args(traces[0], tree), occupancy(traces))
    template = next((s for s in scenarios if s.find("IO_Flow_Parameter_Set_Trace_Based") is not None), None)
    for trace in sorted(glob.glob(os.path.join(tree, "traces", "*.trace"))):
        if os.path.basename(trace) in replayed:
            continue
        if template is None:
            fail("workload has no trace scenario to take the trace flows' settings from")
        scenario = copy.deepcopy(template)
        flow = scenario.find("IO_Flow_Parameter_Set_Trace_Based")
        flow.find("File_Path").text = trace
        flow.find("Initial_Occupancy_Percentage").text = str(TRACE_OCCUPANCY)
        emit(os.path.basename(trace).removesuffix(".trace"), scenario, trace_args(flow, tree),
             TRACE_OCCUPANCY)
    print("\n".join(names))


def mqsim_result(report):
    """Requests, reads, writes and mean device response time (us) over flows."""
    flows = list(ET.parse(report).getroot().iter("Host.IO_Flow"))
    if not flows:
        fail(f"{report}: no Host.IO_Flow")
    count = lambda f, tag: int(f.find(tag).text)
    n = sum(count(f, "Request_Count") for f in flows)
    reads = sum(count(f, "Read_Request_Count") for f in flows)
    mean = sum(count(f, "Request_Count") * float(f.find("Device_Response_Time").text) for f in flows)
    # MQSim reports one mean per flow: per direction only when a flow is one.
    def direction(tag):
        pure = [f for f in flows if count(f, tag) == count(f, "Request_Count")]
        mixed = [f for f in flows if 0 < count(f, tag) < count(f, "Request_Count")]
        if mixed or not pure:
            return "-"
        total = sum(count(f, "Request_Count") for f in pure)
        return f"{sum(count(f, 'Request_Count') * float(f.find('Device_Response_Time').text) for f in pure) / total:.1f}"
    print(n, direction("Read_Request_Count"), direction("Write_Request_Count"), f"{mean / max(n, 1):.1f}")


def iosteer_result(report):
    run = __import__("json").load(open(report))["runs"][0]

    # The phase named "all" covers the run; without one, the phases do.
    whole = [p for p in run["phases"] if p["name"] == "all"] or run["phases"]

    def mean(kind):
        phases = [p[kind] for p in whole if p[kind]["ops"]]
        ops = sum(p["ops"] for p in phases)
        total = sum(p["ops"] * p["lat_us"]["mean"] for p in phases)
        return ops, (f"{total / ops:.1f}" if ops else "-")

    n, overall = mean("all")
    print(n, mean("read")[1], mean("write")[1], overall)


def mqsim_notes(report):
    """What MQSim's drive did that ours does not model, from its report."""
    root = ET.parse(report).getroot()
    ftl = next(root.iter("SSDDevice.FTL")).attrib
    streams = list(root.iter("SSDDevice.IO_Stream"))
    turnaround = lambda tag: max((int(s.find(tag).text) for s in streams), default=0)
    print(f"mapping-table cache misses {int(ftl['CMT_Misses_For_Read']) + int(ftl['CMT_Misses_For_Write'])}"
          f" of {ftl['Total_CMT_Queries']} lookups ({ftl['Issued_Flash_Read_CMD_For_Mapping']} flash reads"
          f" for the map), GC runs {ftl['Total_GC_Executions']}, flash transaction turnaround:"
          f" read {turnaround('Average_Read_Transaction_Turnaround_Time')} us,"
          f" write {turnaround('Average_Write_Transaction_Turnaround_Time')} us")


def iosteer_notes(report):
    d = __import__("json").load(open(report))["runs"][0]["device"]
    print(f"start {d['precondition']}, GC page moves {d['gc_pages_moved']}, reads waited"
          f" {d['read_wait_behind_program_s']} s behind programs, {d['read_wait_behind_gc_s']} s behind GC")


def time_of(log):
    body = open(log).read()
    wall = re.search(r"Elapsed \(wall clock\) time.*: (.*)", body).group(1).strip()
    seconds = sum(float(p) * 60 ** i for i, p in enumerate(reversed(wall.split(":"))))
    cpu = sum(float(re.search(rf"{k} time \(seconds\): (\S+)", body).group(1)) for k in ("User", "System"))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", body).group(1))
    print(f"{seconds:.2f} {cpu:.2f} {rss}")


if __name__ == "__main__":
    commands = {"plan": plan, "mqsim": mqsim_result, "mqsim-notes": mqsim_notes,
                "iosteer": iosteer_result, "iosteer-notes": iosteer_notes, "time": time_of}
    if len(sys.argv) < 3 or sys.argv[1] not in commands:
        fail(__doc__)
    commands[sys.argv[1]](*sys.argv[2:])
