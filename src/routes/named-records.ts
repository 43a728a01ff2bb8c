import type * as v from 'valibot';
import { AuthErrorBody, ErrorBody, GoneBody, InternalErrorBody, ValidationErrorBody } from '../http/error-records.js';
import { AdminUserSchema, ApiKeySchema, PublicUserSchema, TokenPairSchema } from '../auth/records.js';
import { RunRecordSchema } from '../engine/run-records.js';
import { RunEventSchema } from '../runs/records.js';
import { ConversationRecordSchema, MessagePageSchema, MessageRecordSchema } from '../conversations/records.js';
import { FileRecordSchema } from '../files/records.js';
import { AgentRecordSchema, AgentVersionSchema } from '../agents/records.js';
import { DocumentRecordSchema, KnowledgeBaseRecordSchema, RetrieveResultSchema } from '../knowledge/records.js';
import { ConnectorRecordSchema, ConnectorTestResultSchema } from '../connectors/records.js';
import { DeliveryRecordSchema, WebhookRecordSchema } from '../webhooks/records.js';
import { ScheduleRecordSchema } from '../schedules/records.js';

/**
 * The records /openapi.json names: each becomes `#/components/schemas/<name>`, and every response
 * that holds one refers to it. The records themselves live beside their domains (their records.ts).
 */
export const namedRecords: Record<string, v.GenericSchema> = {
  Error: ErrorBody,
  AuthError: AuthErrorBody,
  HTTPValidationError: ValidationErrorBody,
  InternalError: InternalErrorBody,
  StreamGone: GoneBody,
  User: PublicUserSchema,
  AdminUser: AdminUserSchema,
  TokenPair: TokenPairSchema,
  UserApiKeyInfo: ApiKeySchema,
  Run: RunRecordSchema,
  RunEvent: RunEventSchema,
  Conversation: ConversationRecordSchema,
  Message: MessageRecordSchema,
  MessagePage: MessagePageSchema,
  File: FileRecordSchema,
  Agent: AgentRecordSchema,
  AgentVersion: AgentVersionSchema,
  KnowledgeBase: KnowledgeBaseRecordSchema,
  Document: DocumentRecordSchema,
  RetrieveResult: RetrieveResultSchema,
  Connector: ConnectorRecordSchema,
  ConnectorTestResult: ConnectorTestResultSchema,
  Webhook: WebhookRecordSchema,
  WebhookDelivery: DeliveryRecordSchema,
  Schedule: ScheduleRecordSchema,
};
