// Every project role, for role pickers (checked against the API's Role type).
import type { Role } from '../../api.ts';
import { every } from '../../ui/exhaustive.ts';

export const ROLE_OPTIONS = every<Role>()([
  'admin', 'developer', 'member', 'room_creator', 'agent_creator', 'llm_proxy_user',
  'oauth_client_creator', 'oauth_client_inventory', 'oauth_client_manager', 'room_server',
  'session_inventory', 'usage_reporter', 'audit_reader', 'billing_manager', 'service_creator', 'service_inventory',
  'service_manager', 'secret_creator', 'secret_inventory', 'secret_manager', 'route_creator',
  'route_inventory', 'route_manager', 'repository_creator', 'repository_inventory',
  'repository_manager', 'external_oauth_creator', 'external_oauth_inventory',
  'external_oauth_manager', 'share_creator', 'share_inventory', 'share_manager', 'mailbox_creator',
  'mailbox_inventory', 'mailbox_manager', 'feed_creator', 'feed_inventory', 'feed_manager',
  'feed_subscription_creator', 'feed_subscription_inventory', 'feed_subscription_manager',
  'llm_logger_creator', 'llm_logger_inventory', 'llm_logger_manager', 'scheduled_task_creator',
  'scheduled_task_inventory', 'scheduled_task_manager',
]);
