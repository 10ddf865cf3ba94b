// A small line graph as SVG points: a ramp's exposure over its frames.

/**
 * `values` (numbers, nulls skipped) as an SVG polyline's points in a `width` × `height` box,
 * the lowest at the bottom; the range is at least `minimumSpan`, so that a flat line stays flat
 * in the middle instead of filling the box with noise.
 */
export function polylinePoints(values, width, height, minimumSpan = 1) {
  const points = values.map((value, index) => [index, value]).filter(([, value]) => typeof value === "number" && isFinite(value));
  if (!points.length) return { points: "", low: null, high: null };
  let low = Math.min(...points.map(([, value]) => value));
  let high = Math.max(...points.map(([, value]) => value));
  if (high - low < minimumSpan) { const middle = (high + low) / 2; low = middle - minimumSpan / 2; high = middle + minimumSpan / 2; }
  const last = Math.max(1, values.length - 1);
  const x = (index) => Math.round((index / last) * width * 10) / 10;
  const y = (value) => Math.round((height - ((value - low) / (high - low)) * height) * 10) / 10;
  return { points: points.map(([index, value]) => `${x(index)},${y(value)}`).join(" "), low, high };
}
