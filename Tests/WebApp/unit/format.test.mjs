import { test } from "node:test";
import assert from "node:assert/strict";
import { formatClock, formatDuration, formatLateness, formatLatenessPair, formatStops, stopsOf } from "../../../Sources/Daemon/WebApp/Assets/format.js";

test("durations read as people say them", () => {
  assert.equal(formatDuration(250), "250 ms");
  assert.equal(formatDuration(1500), "1.5 s");
  assert.equal(formatDuration(30000), "30 s");
  assert.equal(formatDuration(90000), "1 min 30 s");
  assert.equal(formatDuration(7500000), "2 h 5 min");
  assert.equal(formatDuration(Infinity), "–");
});

test("clocks count in minutes and hours", () => {
  assert.equal(formatClock(7000), "0:07");
  assert.equal(formatClock(750000), "12:30");
  assert.equal(formatClock(3723000), "1:02:03");
  assert.equal(formatClock(-5), "0:00");
});

test("lateness fits a narrow cell in milliseconds", () => {
  assert.equal(formatLateness(40), "0.04 ms");
  assert.equal(formatLateness(1250), "1.3 ms");
  assert.equal(formatLateness(12400), "12 ms");
  assert.equal(formatLateness(undefined), "–");
  assert.equal(formatLatenessPair(312, 1250), "0.3 ms, max 1.3 ms");
  assert.ok(formatLatenessPair(999999, 9999999).length <= 20);
});

test("stops read from the daemon's text and are written in thirds", () => {
  assert.equal(stopsOf("+12"), 12);
  assert.equal(stopsOf("-1 1/3"), -(1 + 1 / 3));
  assert.equal(stopsOf("+0"), 0);
  assert.equal(stopsOf("2/3"), 2 / 3);
  assert.equal(stopsOf("1/0"), null);
  assert.equal(stopsOf("junk"), null);
  assert.equal(formatStops(0), "0");
  assert.equal(formatStops(1 + 1 / 3), "+1 1/3");
  assert.equal(formatStops(-2 / 3), "−2/3");
  assert.equal(formatStops(-2), "−2");
  assert.equal(formatStops(0.1), "0");
});
