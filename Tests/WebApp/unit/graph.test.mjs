import { test } from "node:test";
import assert from "node:assert/strict";
import { polylinePoints } from "../../../Sources/Daemon/WebApp/Assets/graph.js";

test("values become points from the left, the lowest at the bottom", () => {
  assert.deepEqual(polylinePoints([10, 12, 14], 200, 60), { points: "0,60 100,30 200,0", low: 10, high: 14 });
});

test("missing values are skipped and a flat line sits in the middle", () => {
  assert.deepEqual(polylinePoints([5, null, 5], 100, 40), { points: "0,20 100,20", low: 4.5, high: 5.5 });
  assert.deepEqual(polylinePoints([], 100, 40), { points: "", low: null, high: null });
});
