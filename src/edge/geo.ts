import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Reader } from 'maxmind';

export interface Geo {
  country(ip: string): string;
}

/** Country of an IP from an offline .mmdb (default: the CC0 geo-whois-asn-country package); ZZ when unknown. */
export function openGeo(file?: string): Geo {
  const path =
    file ??
    createRequire(import.meta.url).resolve('@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb');
  const reader = new Reader(readFileSync(path)) as unknown as {
    get(ip: string): { country_code?: string; country?: { iso_code?: string } } | null;
  };
  return {
    country(ip: string): string {
      try {
        const address = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
        const rec = reader.get(address);
        return (rec?.country_code ?? rec?.country?.iso_code ?? 'ZZ').toUpperCase();
      } catch {
        return 'ZZ';
      }
    },
  };
}
