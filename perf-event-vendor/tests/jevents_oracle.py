#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""perf's own generator as the oracle of perf-event-vendor's tables.

Run by the `jevents_oracle` unit test (src/oracle.rs); it prints records on
stdout, one a line, fields separated by tabs and escaped as the data files
are (backslash, tab, newline, carriage return).

  jevents_oracle.py tables PMU_EVENTS_DIR ARCH EXPRS_FILE
      Runs tools/perf/pmu-events/jevents.py's own code on arch/ARCH the way
      its main() does for `jevents.py ARCH all arch`: the architecture
      standard events of the directories perf's build reads before ARCH
      (`preprocess_arch_std_files`), the file tree walk in name order with
      jevents' `process_one_file` (which calls `read_json_events` and so
      builds every JsonEvent), then `print_mapping_table`. Writing C is
      replaced by capturing jevents' pending tables. Prints
        C  cpuid  events-table  metrics-table    a row of pmu_events_map
        E  table  name pmu event topic desc unit compat deprecated perpkg
        X  table  name pmu group threshold unit desc compat aggr_mode
              event_grouping no_group default expr
      with every string as perf's compiled tables hold it at run time
      (jevents' C escapes undone) and the expression as jevents compiles it
      in (metric.py's ParsePerfJson(...).Simplify().ToPerfJson()). Then, for
      each line of EXPRS_FILE (escaped expressions), metric.py's form of it:
        P  expr

  jevents_oracle.py metric-ids PMU_EVENTS_DIR EXPRS_FILE
      For each line of EXPRS_FILE (an escaped MetricExpr), what metric.py
      makes of it: its ParsePerfJson(...).Simplify(), the form jevents
      compiles into perf, and the events that form names:
        I  expr  id...   the expression (ToPerfJson) and its ids
        F  error         metric.py cannot read it
      The ids are the Event nodes of the tree (not the arguments of
      has_event or strcmp_cpuid_str, which perf does not count, nor `NaN`,
      which perf's scanner reads as a number), each as perf's scanner reads
      its ToPerfJson form (`/` written `@`, backslash escapes undone),
      sorted, duplicates dropped.

  jevents_oracle.py regex PAIRS_FILE
      For each line `pattern<TAB>text`, glibc's regcomp(REG_EXTENDED) and
      regexec with one match, through ctypes:
        so<TAB>eo   |   -   (no match)   |   E<regcomp's error code>
"""

import argparse
import ctypes
import io
import os
import re
import sys


def escape(s: str) -> str:
  return (s.replace('\\', '\\\\').replace('\t', '\\t').replace('\n', '\\n')
          .replace('\r', '\\r'))


def unescape(s: str) -> str:
  return re.sub(r'\\(.)', lambda m: {'t': '\t', 'n': '\n', 'r': '\r'}.get(
      m.group(1), m.group(1)), s)


C_ESCAPES = {'n': '\n', 'r': '\r', 't': '\t', '"': '"', '\\': '\\', "'": "'"}


def c_string(s):
  """What a C string literal with this text holds (the escapes jevents writes)."""
  if s is None:
    return None

  def one(m):
    if m.group(1) not in C_ESCAPES:
      raise ValueError(f'unexpected C escape in {s!r}')
    return C_ESCAPES[m.group(1)]
  return re.sub(r'\\(.)', one, s)


def text(s) -> str:
  """A value as perf's table decodes it: '' (NULL) when unset or empty."""
  return '' if not s else escape(str(s))


def flag(s) -> str:
  """perf's `*p - '0'` of a flag jevents wrote as the JSON string."""
  return '1' if s and ord(str(s)[0]) - ord('0') != 0 else '0'


AGGR = {'1': 'PerChip', '2': 'PerCore'}
GROUPING = {'1': 'NoGroupEvents', '2': 'NoGroupEventsNmi', '3': 'NoGroupEventsSmt'}


def tables(pmu_events: str, arch: str, exprs_file: str) -> None:
  sys.path.insert(0, pmu_events)
  import jevents
  if not os.path.exists(os.path.join(pmu_events, 'metric.py')):
    return tables_6_1(jevents, pmu_events, arch, exprs_file)
  import metric

  arch_root = os.path.join(pmu_events, 'arch')
  captured = {}

  def capture_events():
    if jevents._pending_events:
      name = jevents._pending_events_tblname
      if not name.endswith('_sys'):
        jevents._event_tables.append(name)
      captured.setdefault(name, ([], []))[0].extend(jevents._pending_events)
    jevents._pending_events = []

  def capture_metrics():
    if jevents._pending_metrics:
      name = jevents._pending_metrics_tblname
      if not name.endswith('_sys'):
        jevents._metric_tables.append(name)
      events_table = name.replace('pmu_metrics_', 'pmu_events_', 1)
      captured.setdefault(events_table, ([], []))[1].extend(jevents._pending_metrics)
    jevents._pending_metrics = []

  jevents.print_pending_events = capture_events
  jevents.print_pending_metrics = capture_metrics

  def ftw(path, parents, action):
    """jevents main()'s ftw with model 'all'."""
    for item in sorted(os.scandir(path), key=lambda e: e.name):
      action(parents, item)
      if item.is_dir():
        ftw(item.path, parents + [item.name], action)

  # perf's build (`jevents.py ARCH all arch`) walks ARCH and 'test' in
  # name order; the events of ARCH are built (and cached) with the
  # standard events of the directories before it.
  for a in sorted({arch, 'test'}):
    if a > arch:
      break
    jevents.preprocess_arch_std_files(os.path.join(arch_root, a))
  ftw(os.path.join(arch_root, arch), [], jevents.process_one_file)
  capture_events()
  capture_metrics()

  jevents._args = argparse.Namespace(starting_dir=arch_root, output_file=io.StringIO())
  jevents.print_mapping_table([arch])
  entry = re.compile(
      r'\{\n\t\.arch = "(?P<arch>[^"]*)",\n\t\.cpuid = "(?P<cpuid>(?:[^"\\]|\\.)*)",\n'
      r'\t\.event_table = \{\n\t\t\.pmus = (?P<events>\w+),\n[^}]*\},\n'
      r'\t\.metric_table = \{\n\t\t\.pmus = (?P<metrics>\w+),?\n')
  out = []
  for m in entry.finditer(jevents._args.output_file.getvalue()):
    if m.group('arch') != arch:
      continue
    out.append('\t'.join(['C', escape(c_string(m.group('cpuid'))), m.group('events'),
                          m.group('metrics')]))
  for table, (events, metrics) in captured.items():
    for e in events:
      out.append('\t'.join(['E', table, text(e.name), text(e.pmu), text(e.event),
                            text(e.topic), text(c_string(e.desc)), text(e.unit),
                            text(e.compat), flag(e.deprecated), flag(e.perpkg)]))
    for m in metrics:
      out.append('\t'.join([
          'X', table, text(m.metric_name), text(m.pmu), text(m.metric_group),
          text(m.metric_threshold), text(m.unit), text(c_string(m.desc)), text(m.compat),
          AGGR.get(m.aggr_mode, ''), GROUPING.get(m.event_grouping, ''),
          text(m.metricgroup_no_group), text(m.default_metricgroup_name),
          escape(m.metric_expr.ToPerfJson())
      ]))
  with open(exprs_file, encoding='utf-8') as f:
    for line in f.read().splitlines():
      parsed = metric.ParsePerfJson(unescape(line)).Simplify().ToPerfJson()
      out.append('P\t' + escape(parsed))
  sys.stdout.write('\n'.join(out) + '\n')


def tables_6_1(jevents, pmu_events: str, arch: str, exprs_file: str) -> None:
  """`tables` for the jevents.py of Linux 6.1 (no metric.py).

  6.1's jevents keeps one table per model directory of `struct pmu_event`,
  events and metrics alike, named pme_<dir>, and its main() reads the
  standard events of ARCH and test (in name order) before it walks either.
  Perf 6.1 reads an entry with a name as an event (util/pmu.c) and one with
  a metric name as a metric (util/metricgroup.c): E and X records are
  those, in the table's walk order (before jevents sorts it for the C
  file), the mapping table's rows C records naming the one table:
    C  cpuid  table
  Fields 6.1 has not are empty; a NULL PMU (no Unit: perf takes the CPU's
  core PMU) is written default_core, as 6.12's jevents names it; the flags
  are perf 6.1's readings of the strings (deprecated when set at all,
  per package when sscanf("%d") reads 1); the expression is the string
  jevents compiles in (6.1 has no metric.py), so each P record is its
  EXPRS_FILE line as it is.
  """
  arch_root = os.path.join(pmu_events, 'arch')
  captured = {}
  current = []

  def prefix(tblname):
    if jevents._close_table:
      raise IOError('Printing table prefix but last table has no suffix')
    current[:] = [tblname]
    captured.setdefault(tblname, ([], []))
    jevents._close_table = True

  def suffix():
    if not jevents._close_table:
      return
    events, metrics = captured[current[0]]
    for e in jevents._pending_events:
      if e.name:
        events.append(e)
      if e.metric_name:
        metrics.append(e)
    jevents._pending_events = []
    jevents._close_table = False

  jevents.print_events_table_prefix = prefix
  jevents.print_events_table_suffix = suffix

  def ftw(path, parents, action):
    """jevents main()'s ftw."""
    for item in sorted(os.scandir(path), key=lambda e: e.name):
      action(parents, item)
      if item.is_dir():
        ftw(item.path, parents + [item.name], action)

  for a in sorted({arch, 'test'}):
    jevents.preprocess_arch_std_files(os.path.join(arch_root, a))
  ftw(os.path.join(arch_root, arch), [], jevents.process_one_file)
  suffix()

  jevents._args = argparse.Namespace(starting_dir=arch_root, output_file=io.StringIO())
  jevents.print_mapping_table([arch])
  entry = re.compile(
      r'\{\n\t\.arch = "(?P<arch>[^"]*)",\n\t\.cpuid = "(?P<cpuid>(?:[^"\\]|\\.)*)",\n'
      r'\t\.table = \{\n\t\t\.entries = (?P<table>\w+),\n')
  out = []
  for m in entry.finditer(jevents._args.output_file.getvalue()):
    if m.group('arch') != arch:
      continue
    out.append('\t'.join(['C', escape(c_string(m.group('cpuid'))), m.group('table')]))

  def pmu(p):
    return text(p) if p else 'default_core'

  def perpkg(p):
    m = re.match(r'\s*([+-]?\d+)', p or '')
    return '1' if m and int(m.group(1)) == 1 else '0'

  grouping = {'NO_NMI_WATCHDOG': 'NoGroupEventsNmi'}
  for table, (events, metrics) in captured.items():
    for e in events:
      out.append('\t'.join(['E', table, text(e.name), pmu(e.pmu), text(e.event),
                            text(e.topic), text(c_string(e.desc)), text(e.unit),
                            text(e.compat), '1' if e.deprecated else '0',
                            perpkg(e.perpkg)]))
    for m in metrics:
      constraint = m.metric_constraint
      out.append('\t'.join([
          'X', table, text(m.metric_name), pmu(m.pmu), text(m.metric_group), '',
          text(m.unit), text(c_string(m.desc)), text(m.compat),
          AGGR.get(m.aggr_mode, ''), grouping.get(constraint, text(constraint)), '', '',
          text(c_string(m.metric_expr))
      ]))
  with open(exprs_file, encoding='utf-8') as f:
    for line in f.read().splitlines():
      out.append('P\t' + line)
  sys.stdout.write('\n'.join(out) + '\n')


def metric_ids(pmu_events: str, exprs_file: str) -> None:
  sys.path.insert(0, pmu_events)
  import metric

  def ids(e, out):
    if isinstance(e, metric.Event):
      if e.name != 'NaN':
        out.add(re.sub(r'\\(.)', r'\1', e.ToPerfJson()))
    elif isinstance(e, metric.Operator):
      ids(e.lhs, out)
      ids(e.rhs, out)
    elif isinstance(e, metric.Select):
      ids(e.true_val, out)
      ids(e.cond, out)
      ids(e.false_val, out)
    elif isinstance(e, metric.Function):
      if e.fn not in ('has_event', 'strcmp_cpuid_str'):
        ids(e.lhs, out)
        if e.rhs:
          ids(e.rhs, out)
    return out

  out = []
  with open(exprs_file, encoding='utf-8') as f:
    for line in f.read().splitlines():
      try:
        parsed = metric.ParsePerfJson(unescape(line)).Simplify()
      except Exception as err:  # pylint: disable=broad-except
        out.append('F\t' + escape(f'{type(err).__name__}: {err}'))
        continue
      out.append('\t'.join(['I', escape(parsed.ToPerfJson())] +
                           [escape(i) for i in sorted(ids(parsed, set()))]))
  sys.stdout.write('\n'.join(out) + '\n')


class RegMatch(ctypes.Structure):
  # glibc's regmatch_t: two regoff_t, which are int.
  _fields_ = [('rm_so', ctypes.c_int), ('rm_eo', ctypes.c_int)]


def regex(pairs_file: str) -> None:
  libc = ctypes.CDLL(None)
  compiled = {}
  out = []
  with open(pairs_file, encoding='utf-8') as f:
    for line in f.read().splitlines():
      pattern, subject = line.split('\t')
      if pattern not in compiled:
        buf = ctypes.create_string_buffer(4096)  # regex_t is 64 bytes on glibc
        code = libc.regcomp(buf, pattern.encode(), 1)  # REG_EXTENDED
        compiled[pattern] = (buf, code)
      buf, code = compiled[pattern]
      if code:
        out.append(f'E{code}')
        continue
      match = (RegMatch * 1)()
      if libc.regexec(buf, subject.encode(), 1, match, 0):
        out.append('-')
      else:
        out.append(f'{match[0].rm_so}\t{match[0].rm_eo}')
  for buf, code in compiled.values():
    if not code:
      libc.regfree(buf)
  sys.stdout.write('\n'.join(out) + '\n')


if __name__ == '__main__':
  if sys.argv[1] == 'tables':
    tables(sys.argv[2], sys.argv[3], sys.argv[4])
  elif sys.argv[1] == 'metric-ids':
    metric_ids(sys.argv[2], sys.argv[3])
  elif sys.argv[1] == 'regex':
    regex(sys.argv[2])
  else:
    raise SystemExit(__doc__)
