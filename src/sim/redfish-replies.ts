/**
 * Standard Redfish bodies the simulator builds itself (sessions, tasks, errors with no vendor capture behind them).
 */
import type { RedfishSession, SimBmc, UpdateTask } from './sim-bmc.ts';

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

export type TaskState = 'Running' | 'Completed' | 'Exception';

export function taskState(task: UpdateTask, now: number): { state: TaskState; percent: number } {
  const elapsed = now - task.startedAt;
  if (elapsed < task.durationMs && !task.finished) {
    return { state: 'Running', percent: Math.min(99, Math.floor((elapsed / task.durationMs) * 100)) };
  }
  return task.willFail ? { state: 'Exception', percent: 100 } : { state: 'Completed', percent: 100 };
}

export function taskBody(bmc: SimBmc, task: UpdateTask, now: number): unknown {
  const { state, percent } = taskState(task, now);
  const messages =
    state === 'Running'
      ? [{ MessageId: 'Update.1.0.UpdateInProgress', Message: `An update is in progress for ${task.imageUri}.`, Severity: 'OK' }]
      : state === 'Completed'
        ? [{ MessageId: 'Update.1.0.UpdateSuccessful', Message: `The update of ${task.imageUri} completed; version ${task.version} installed.`, Severity: 'OK' }]
        : [{ MessageId: 'Update.1.0.ApplyFailed', Message: `Installing or applying the image ${task.imageUri} failed.`, Severity: 'Critical', Resolution: 'Retry the update; if it fails again, check the image and the component.' }];
  return {
    '@odata.id': `${bmc.linkPrefix}/redfish/v1/TaskService/Tasks/${task.id}`,
    '@odata.type': '#Task.v1_4_3.Task',
    Id: task.id,
    Name: `Firmware update ${task.id}`,
    TaskState: state,
    TaskStatus: state === 'Exception' ? 'Critical' : 'OK',
    PercentComplete: percent,
    StartTime: new Date(task.startedAt).toISOString(),
    ...(state === 'Running' ? {} : { EndTime: new Date(task.startedAt + task.durationMs).toISOString() }),
    Messages: messages,
    Payload: { TargetUri: '/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate', HttpOperation: 'POST', JsonBody: JSON.stringify({ ImageURI: task.imageUri }) },
  };
}
