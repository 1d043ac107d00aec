import type { LogServiceSpec } from './profiles/bmc-profile.ts';
import { status, withoutUndefined, type Body, type TreeWriter } from './tree-writing.ts';

/** `LogServices` under `owner`: each log service and its `Entries`, the entries expanded in the collection as BMCs list them. */
export function writeLogServices(writer: TreeWriter, owner: string, services: readonly LogServiceSpec[] | undefined): Body | undefined {
  if (!services || services.length === 0) return undefined;
  const servicesPath = `${owner}/LogServices`;
  writer.collection(servicesPath, 'LogServiceCollection', 'Log Service Collection', services.map((service) => `${servicesPath}/${service.id}`));
  for (const service of services) {
    const path = `${servicesPath}/${service.id}`;
    writer.resource(path, 'LogService', 'v1_1_0', {
      Id: service.id,
      Name: `${service.id} Log Service`,
      LogEntryType: service.logEntryType,
      MaxNumberOfRecords: service.maxRecords,
      OverWritePolicy: 'WrapsWhenFull',
      ServiceEnabled: true,
      Status: status(undefined),
      Entries: writer.link(`${path}/Entries`),
      Actions: { '#LogService.ClearLog': { target: `${path}/Actions/LogService.ClearLog` } },
    });
    writer.collection(`${path}/Entries`, 'LogEntryCollection', 'Log Entry Collection', []);
    const collection = writer.tree.get(`${path}/Entries`) as Body;
    collection['Members'] = service.entries.map((entry) => {
      const head: Body = { ...writer.link(`${path}/Entries/${entry.id}`), '@odata.type': '#LogEntry.v1_4_2.LogEntry' };
      const body = withoutUndefined({
        ...head,
        Id: entry.id,
        Name: `Log Entry ${entry.id}`,
        Created: entry.created,
        EntryType: entry.entryType ?? 'SEL',
        EntryCode: entry.entryCode,
        SensorType: entry.sensorType,
        SensorNumber: entry.sensorNumber,
        Severity: entry.severity,
        MessageId: entry.messageId,
        Message: entry.message,
      });
      writer.tree.set(`${path}/Entries/${entry.id}`, body);
      return body;
    });
    collection['Members@odata.count'] = service.entries.length;
  }
  return writer.link(servicesPath);
}
