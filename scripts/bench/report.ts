/**
 * Result rows, their table line on stderr, and the JSON document. Every
 * measurement reports through a {@link Report}, so the table and the JSON
 * always hold the same rows in the same order.
 *
 * @module
 */
import { readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import type { BenchConfig } from "./config.ts";

/** One measured figure, with its floor when it has one. */
export interface Row {
  name: string;
  unit: string;
  value: number;
  p95?: number;
  floor?: number;
  floorName?: string;
  ratio?: number;
  target?: string;
}

/** Median, 95th percentile and count of a set of samples. */
export function stats(samples: number[]): { median: number; p95: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * (s.length - 1) + 0.5))];
  return { median: at(0.5), p95: at(0.95), n: s.length };
}

/** A process's resident set in MiB, or NaN once it is gone. */
export function rssMiB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const m = /VmRSS:\s+(\d+) kB/.exec(status);
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

function fmt(v: number | undefined): string {
  return v === undefined ? "" : v >= 100 ? v.toFixed(0) : v.toFixed(2);
}

/** The rows so far; each is printed as it is added. */
export class Report {
  /** Every row, in the order reported. */
  readonly rows: Row[] = [];

  /** Records a row and prints its table line. */
  add(row: Row): void {
    // value / floor for both kinds of unit: above 1 is slower than the
    // floor for a time, faster for a rate.
    if (row.floor !== undefined) row.ratio = row.value / row.floor;
    this.rows.push(row);
    console.error(
      `${row.name.padEnd(34)} ${fmt(row.value).padStart(9)} ${row.unit.padEnd(6)}` +
        (row.p95 !== undefined ? ` p95 ${fmt(row.p95).padStart(8)}` : "".padEnd(13)) +
        (row.floor !== undefined
          ? `  floor ${fmt(row.floor).padStart(8)} (${row.floorName})  ratio ${
            row.ratio!.toFixed(2)
          }`
          : "") +
        (row.target ? `  target ${row.target}` : ""),
    );
  }

  /** Prints and/or writes the JSON document, as `--json` and `--out` ask. */
  write(cfg: BenchConfig, seconds: number): void {
    const json = JSON.stringify(
      {
        date: new Date().toISOString(),
        server: cfg.serverCmd.join(" "),
        runtime: process.versions,
        quick: cfg.quick,
        seconds,
        results: this.rows,
      },
      null,
      2,
    ) + "\n";
    if (cfg.json) process.stdout.write(json);
    if (cfg.out) writeFileSync(cfg.out, json);
  }
}
