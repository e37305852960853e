/**
 * MCP prompts: tasks a user picks from a client's menu. Each renders one user
 * message that tells the model which tools to use, in which order, so the
 * answer rests on Stoop's data rather than the model's memory.
 */
import type { GetPromptResult, Prompt } from '@modelcontextprotocol/sdk/types.js';

export const PROMPTS: Prompt[] = [
  {
    name: 'find_apartment',
    title: 'Find an apartment',
    description: 'Find rentals in a neighborhood within a budget and bedroom count.',
    arguments: [
      {
        name: 'area',
        description: 'Neighborhood or borough, e.g. "Astoria" or "Upper West Side".',
        required: true,
      },
      { name: 'budget', description: 'Maximum monthly rent in USD, e.g. "3500".', required: true },
      { name: 'beds', description: 'Bedrooms wanted (0 for a studio), e.g. "1".', required: false },
    ],
  },
  {
    name: 'compare_neighborhoods',
    title: 'Compare neighborhoods',
    description: 'Compare rents, inventory and how fast listings go in 2 to 5 neighborhoods.',
    arguments: [
      {
        name: 'areas',
        description: 'Neighborhood names, comma-separated, e.g. "Astoria, Long Island City, Greenpoint".',
        required: true,
      },
    ],
  },
  {
    name: 'explain_building',
    title: "Explain a building's record",
    description: 'Summarize a building: facts, scores, HPD violations and what is for rent or sale in it.',
    arguments: [
      { name: 'buildingId', description: 'The building id (from a listing’s buildingId).', required: true },
    ],
  },
];

/** Keeps an argument to one short line: it is pasted into the prompt text. */
function arg(args: Record<string, string>, name: string, fallback = ''): string {
  return (args[name] ?? fallback).replace(/\s+/g, ' ').trim().slice(0, 200);
}

function userText(description: string, text: string): GetPromptResult {
  return { description, messages: [{ role: 'user', content: { type: 'text', text } }] };
}

/** The prompt's message for these arguments; undefined for an unknown prompt. */
export function renderPrompt(name: string, args: Record<string, string>): GetPromptResult | undefined {
  switch (name) {
    case 'find_apartment': {
      const beds = arg(args, 'beds');
      return userText(
        'Find an apartment',
        `Find me a rental in ${arg(args, 'area', 'New York City')} for at most $${arg(args, 'budget', '?')} a month${
          beds ? ` with ${beds === '0' ? 'a studio layout' : `${beds} bedroom(s)`}` : ''
        }. First call list_areas with q set to the place name to get its area id. Then call search_rentals with areas, maxPrice${
          beds ? `, minBeds and maxBeds set to ${beds}` : ''
        } and sort=PRICE. Show the best matches (address, price, beds, no-fee, days on market) and, with get_market_snapshot for the same area and bedrooms, say how these prices compare with the area's median.`,
      );
    }
    case 'compare_neighborhoods':
      return userText(
        'Compare neighborhoods',
        `Compare these neighborhoods for renting: ${arg(args, 'areas', 'Astoria, Greenpoint')}. Look up each one's area id with list_areas, then call compare_neighborhoods with the ids (up to 5, comma-separated). Present a table of inventory, median rent, rent quartiles, median days on market and share of price cuts, note figures that are null because too few listings stand behind them, and use get_market_trends (metric median_price, interval week) to say where rents are moving.`,
      );
    case 'explain_building': {
      const id = arg(args, 'buildingId', '?');
      return userText(
        "Explain a building's record",
        `Explain the record of building ${id}. Call get_building (facts, amenities, policies, public-record data), get_building_scores (health, noise, safety, transit), get_building_violations (HPD violations: count them by class and note the most recent open ones) and get_building_listings (what is on the market). Summarize what a prospective tenant or buyer should know, citing the figures.`,
      );
    }
    default:
      return undefined;
  }
}
