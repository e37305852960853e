/**
 * The RECOMMENDED sort's ranking formula: one rule for every producer of
 * `listings.rank_score` (the demo market generator and the refresh writer), so
 * a listing ranks the same whichever path wrote it.
 */

/** What the formula looks at; everything else about a listing is irrelevant to its rank. */
export interface RankInput {
  photoCount: number;
  daysActive: number;
  has3d: boolean;
  /** No fee (rentals) or an upcoming open house (sales). */
  promoted: boolean;
  price: number;
  /** The area's typical price for this kind of home today; equal to `price` makes the value term neutral. */
  expected: number;
  hasSqft: boolean;
  scraped: boolean;
}

/**
 * RECOMMENDED sort key, an integer in 0–1000 (higher ranks first):
 *   300 × min(photos, 15) / 15            (rich galleries first)
 * + 250 × exp(−days since (re)listed / 30) (fresh inventory)
 * + 100 × has 3D tour
 * + 100 × no fee (rentals) / upcoming open house (sales)
 * + 150 × value, value = clamp((expected − price) / expected, −0.5, 0.5) + 0.5,
 *         expected = the area's typical price for this bedroom count and type today
 * +  50 × sqft known + 50 × detail scraped
 */
export function rank(input: RankInput): number {
  const value = Math.max(-0.5, Math.min(0.5, (input.expected - input.price) / input.expected)) + 0.5;
  return Math.round(
    (300 * Math.min(input.photoCount, 15)) / 15 +
      250 * Math.exp(-input.daysActive / 30) +
      (input.has3d ? 100 : 0) +
      (input.promoted ? 100 : 0) +
      150 * value +
      (input.hasSqft ? 50 : 0) +
      (input.scraped ? 50 : 0),
  );
}
