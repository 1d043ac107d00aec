/**
 * Standard Redfish bodies the simulator builds itself (sessions, tasks, errors with no vendor capture behind them).
 */
import type { RedfishSession, SimBmc } from './sim-bmc.ts';

export function baseError(messageId: string, message: string, resolution: string): unknown {
  return {
    error: {
      code: `Base.1.8.${messageId}`,
      message,
      '@Message.ExtendedInfo': [{ MessageId: `Base.1.8.${messageId}`, Message: message, Severity: 'Critical', Resolution: resolution }],
    },
  };
}

export function resourceMissing(path: string): unknown {
  return baseError('ResourceMissingAtURI', `The resource at the URI ${path} was not found.`, 'Place a valid resource at the URI or correct the URI and resubmit the request.');
}

export function sessionBody(bmc: SimBmc, session: RedfishSession): unknown {
  return {
    '@odata.id': `${bmc.linkPrefix}/redfish/v1/SessionService/Sessions/${session.id}`,
    '@odata.type': '#Session.v1_3_0.Session',
    Id: session.id,
    Name: 'User Session',
    UserName: session.userName,
    CreatedTime: new Date(session.createdAt).toISOString(),
  };
}

export function sessionCollection(bmc: SimBmc): unknown {
  const members = [...(bmc.sessions?.values() ?? [])].map((session) => ({
    '@odata.id': `${bmc.linkPrefix}/redfish/v1/SessionService/Sessions/${session.id}`,
  }));
  return {
    '@odata.id': `${bmc.linkPrefix}/redfish/v1/SessionService/Sessions`,
    '@odata.type': '#SessionCollection.SessionCollection',
    Name: 'Session Collection',
    Members: members,
    'Members@odata.count': members.length,
  };
}
