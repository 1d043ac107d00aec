/**
 * The PCIe device behind a Processor. A GPU's Processor often names no `Model` (GB200's `Processors/GPU_n`), while
 * the PCIe device it sits on does; the Processor reaches it by `Links.PCIeDevice` (one link, or a list on services that
 * wrote the property as an array), or only through its functions: `Links.PCIeFunctions[]`, each a PCIeFunction whose
 * own `Links.PCIeDevice` is the device.
 *
 * Bounded: the direct link first, then at most `MAX_FUNCTIONS` functions, each read once; the first device that
 * answers is the one. Unreadable links are recorded by the reader, never thrown.
 */
import { asResource, canonicalPath, type Located, type ObservationRecorder, type Resource, type ResourceReader } from './resource-reader.js';

/** Functions followed to find their device: a GPU's functions all sit on one device. */
const MAX_FUNCTIONS = 2;

/** The `@odata.id` links of a `Links` property given as one link or a list of them. */
function linksOf(value: unknown): string[] {
  const entries = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  return entries.flatMap((entry) => {
    const id = asResource(entry)?.['@odata.id'];
    return typeof id === 'string' && id.startsWith('/') ? [canonicalPath(id)] : [];
  });
}

/** The PCIe device `processor` links to, directly or through one of its PCIe functions; undefined when none answers. */
export async function linkedPcieDevice(processor: Resource, reader: ResourceReader, recorder: ObservationRecorder): Promise<Located | undefined> {
  const links = asResource(processor.Links);
  for (const path of linksOf(links?.PCIeDevice).slice(0, 1)) {
    const resource = await reader.read(path, recorder);
    if (resource) return { path, resource };
  }
  for (const functionPath of linksOf(links?.PCIeFunctions).slice(0, MAX_FUNCTIONS)) {
    const pcieFunction = await reader.read(functionPath, recorder);
    const devicePath = pcieFunction ? linksOf(asResource(pcieFunction.Links)?.PCIeDevice)[0] : undefined;
    const resource = devicePath ? await reader.read(devicePath, recorder) : undefined;
    if (devicePath && resource) return { path: devicePath, resource };
  }
  return undefined;
}
