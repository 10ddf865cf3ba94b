import { test } from "node:test";
import assert from "node:assert/strict";
import { barHeights, histogramWords, luminanceHistogram } from "../../../Sources/Daemon/WebApp/Assets/histogram.js";
import { endNotice, metresBetween, positionWorthSending } from "../../../Sources/Daemon/WebApp/Assets/field.js";

test("luminance falls in the bin of its brightness, weighted as Rec. 709", () => {
  const pixels = [0, 0, 0, 255, 255, 255, 255, 255, 0, 255, 0, 255, 0, 0, 255, 255];
  const counts = luminanceHistogram(pixels, 4);
  // black, white, pure green (luma 182: bin 2), pure blue (luma 18: bin 0)
  assert.deepEqual(counts, [2, 0, 1, 1]);
  assert.equal(histogramWords(counts), "50 % black, 25 % white, mean brightness 44 %");
  assert.equal(histogramWords([0, 0]), "no pixels");
  assert.deepEqual(barHeights([0, 1, 10], 20), [0, 2, 20]);
});

test("a fix is sent first, then 25 m away or five minutes on", () => {
  const lausanne = { latitude: 46.5197, longitude: 6.6323, fixUnixMilliseconds: 0 };
  assert.ok(positionWorthSending(null, lausanne));
  const near = { ...lausanne, latitude: 46.5198, fixUnixMilliseconds: 60000 };
  assert.ok(Math.abs(metresBetween(lausanne, near) - 11.1) < 0.2, metresBetween(lausanne, near));
  assert.ok(!positionWorthSending(lausanne, near));
  assert.ok(positionWorthSending(lausanne, { ...lausanne, latitude: 46.5200 }));
  assert.ok(positionWorthSending(lausanne, { ...lausanne, fixUnixMilliseconds: 300000 }));
});

test("an ended run reads as a notification", () => {
  const job = { id: 4, state: "finished", reason: "all slots done", plan: { intervalMs: 1000, frames: 6, exposure: { kind: "camera" } },
    summary: { taken: 6, failed: 0, skipped: 0 } };
  assert.deepEqual(endNotice(job), { title: "Time-lapse 4 finished", body: "all slots done. 6 taken, 0 failed, 0 skipped." });
  assert.equal(endNotice({ ...job, summary: { taken: 5, failed: 1 } }).title, "Time-lapse 4 ended with failures");
});
