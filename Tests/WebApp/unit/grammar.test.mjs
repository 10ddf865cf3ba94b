// The page's grammar of durations and times of day against the cases the daemon's is held to.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { parseDuration, parseFieldDuration, parseTimeOfDay } from "../../../Sources/Daemon/WebApp/Assets/grammar.js";

const fixture = JSON.parse(readFileSync(new URL("../../Fixtures/text-grammar.json", import.meta.url)));

test("every duration in text-grammar.json reads as the daemon reads it", () => {
  for (const [text, expected] of fixture.durations) {
    const read = parseDuration(text);
    const shown = Number.isNaN(read) ? null : read === Infinity ? "tooLong" : read;
    assert.equal(shown, expected, `"${text}"`);
  }
});

test("every time of day in text-grammar.json reads as the daemon reads it", () => {
  for (const [text, expected] of fixture.timesOfDay) assert.deepEqual(parseTimeOfDay(text), expected, `"${text}"`);
});

test("a field in seconds takes a bare number with a comma or a point, and the grammar otherwise", () => {
  assert.equal(parseFieldDuration("0,5", 1000), 500);
  assert.equal(parseFieldDuration("0.5", 1000), 500);
  assert.equal(parseFieldDuration(" 4 ", 1000), 4000);
  assert.equal(parseFieldDuration("2m", 1000), 120000);
  assert.equal(parseFieldDuration("1,5s", 1000), 1500);
  assert.ok(Number.isNaN(parseFieldDuration("0,", 1000)));
  assert.ok(Number.isNaN(parseFieldDuration("-1", 1000)));
  assert.ok(Number.isNaN(parseFieldDuration("", 1000)));
  assert.ok(Number.isNaN(parseFieldDuration("1,2,3", 1000)));
});
