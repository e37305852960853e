/**
 * Fixed-broadband availability as buildings carry it (`internetProviders`),
 * after the FCC Broadband Data Collection: one vocabulary for the demo
 * generator, the FCC importer and the building API.
 */

/** Attribution the FCC requires wherever its data is shown. */
export const FCC_DISCLAIMER = 'This product uses FCC data but is not endorsed or certified by the FCC.';

/** BDC technology codes and their published labels. */
export const TECHNOLOGY_LABELS: Readonly<Record<number, string>> = {
  0: 'Other',
  10: 'Copper Wire',
  40: 'Cable',
  50: 'Fiber to the Premises',
  60: 'GSO Satellite',
  61: 'NGSO Satellite',
  70: 'Unlicensed Fixed Wireless',
  71: 'Licensed Fixed Wireless',
  72: 'Licensed-by-Rule Fixed Wireless',
};

export const FIBER_TECHNOLOGY = 50;

export interface InternetProvider {
  providerId: number;
  providerName: string;
  holdingCompanyName: string;
  technologyCode: number;
  technologyLabel: string;
  maxDownloadMbps: number;
  maxUploadMbps: number;
  lowLatency: boolean;
}

/** Stored as `buildings.internet_providers_json`. */
export interface InternetProviders {
  status: 'matched';
  source: 'fcc_bdc';
  /** `building`: the building's own FCC location; `h3_res8`: its H3 resolution-8 cell. */
  coverageLevel: 'building' | 'h3_res8';
  fccLocationId: number;
  blockGeoid: string;
  matchedAddress: string;
  unitCount: number;
  updatedAt: string;
  providers: InternetProvider[];
  disclaimer: string;
}
