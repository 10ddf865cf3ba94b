// A picture's luminance histogram, from its thumbnail's pixels: how much of the frame sits at
// each brightness, and how much is clipped at either end, which a photographer reads to judge
// an exposure the meter cannot (a night sky, snow).

/** Rec. 709 luma of 8-bit RGBA pixels in `bins` bins (0 dark … bins − 1 bright). */
export function luminanceHistogram(rgba, bins = 64) {
  const counts = new Array(bins).fill(0);
  for (let index = 0; index + 3 < rgba.length; index += 4) {
    const luma = 0.2126 * rgba[index] + 0.7152 * rgba[index + 1] + 0.0722 * rgba[index + 2];
    counts[Math.min(bins - 1, Math.floor((luma / 256) * bins))] += 1;
  }
  return counts;
}

/** The histogram in words: the share of pixels in the darkest and brightest bins, in percent. */
export function histogramWords(counts) {
  const total = counts.reduce((sum, count) => sum + count, 0);
  if (!total) return "no pixels";
  const percent = (count) => Math.round((count / total) * 100);
  const dark = percent(counts[0]);
  const bright = percent(counts[counts.length - 1]);
  const mean = counts.reduce((sum, count, bin) => sum + count * (bin + 0.5), 0) / total / counts.length;
  return `${dark} % black, ${bright} % white, mean brightness ${Math.round(mean * 100)} %`;
}

/** Bars scaled to the tallest, as heights from 0 to `height`. */
export function barHeights(counts, height) {
  const tallest = Math.max(1, ...counts);
  return counts.map((count) => (count ? Math.max(1, Math.round((count / tallest) * height)) : 0));
}
