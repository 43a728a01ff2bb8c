/**
 * Generated from /openapi.json by openapi-typescript (`npm run console:api`). Do not edit.
 */

export interface paths {
    "/api/admin/api-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List every user's API keys (user_id, is_active filters)
         * @description Scope `admin` (or full access). Role `admin`.
         */
        get: operations["getApiAdminApiKeys"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/admin/api-keys/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Delete any user's API key
         * @description Scope `admin` (or full access). Role `admin`.
         */
        delete: operations["deleteApiAdminApiKeysId"];
        options?: never;
        head?: never;
        /**
         * Rename, enable or disable any user's API key, or change its expiry or limits (rate_limit_rpm, token_budget)
         * @description Scope `admin` (or full access). Role `admin`.
         */
        patch: operations["patchApiAdminApiKeysId"];
        trace?: never;
    };
    "/api/admin/audit-log": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The audit log, newest first (actor_id, action, target_id, from, to)
         * @description Scope `admin` (or full access). Role `admin`.
         */
        get: operations["getApiAdminAuditLog"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/admin/dashboard-ticket": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A one-time ticket (60 s) into the queue dashboard for this admin and credential: the console opens the dashboard with it
         * @description Scope `admin` (or full access). Role `admin`.
         */
        post: operations["postApiAdminDashboardTicket"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/admin/model-prices": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List model prices, by model name
         * @description Scope `admin` (or full access). Role `admin`.
         */
        get: operations["getApiAdminModelPrices"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/admin/model-prices/{model}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a model's price
         * @description Scope `admin` (or full access). Role `admin`.
         */
        get: operations["getApiAdminModelPricesModel"];
        /**
         * Set a model's price per million input and output tokens (201 when new, 200 when replaced); runs that end afterwards are costed at it
         * @description Scope `admin` (or full access). Role `admin`.
         */
        put: operations["putApiAdminModelPricesModel"];
        post?: never;
        /**
         * Remove a model's price: runs of it that end afterwards have no cost (null)
         * @description Scope `admin` (or full access). Role `admin`.
         */
        delete: operations["deleteApiAdminModelPricesModel"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/admin/queues": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Job counts and workers per BullMQ queue (cached for 2 s)
         * @description Scope `admin` (or full access). Role `admin`.
         */
        get: operations["getApiAdminQueues"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/admin/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List runs across users, newest first (status, user_id, mode, from, to)
         * @description Scope `admin` (or full access). Role `admin`.
         */
        get: operations["getApiAdminRuns"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/admin/runs/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read any user's run (its page in the console)
         * @description Scope `admin` (or full access). Role `admin`.
         */
        get: operations["getApiAdminRunsId"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/admin/runs/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel any user's queued or running run
         * @description Scope `admin` (or full access). Role `admin`.
         */
        post: operations["postApiAdminRunsIdCancel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/admin/runs/{id}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Replay any user's run's events (all, or after Last-Event-ID or ?after=), then follow it live to done
         * @description Scope `admin` (or full access). Role `admin`.
         */
        get: operations["getApiAdminRunsIdEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/admin/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Runs, outcomes, tokens and cost per user or per UTC day in [from, to) (default: the last 30 days; at most 366)
         * @description Scope `admin` (or full access). Role `admin`.
         */
        get: operations["getApiAdminUsage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/admin/users": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List users (q: email contains; role; is_active)
         * @description Scope `admin` (or full access). Role `admin`.
         */
        get: operations["getApiAdminUsers"];
        put?: never;
        /**
         * Create a user; without a password one is generated and shown in this response only
         * @description Scope `admin` (or full access). Role `admin`.
         */
        post: operations["postApiAdminUsers"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/admin/users/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a user, with counts of what they own
         * @description Scope `admin` (or full access). Role `admin`.
         */
        get: operations["getApiAdminUsersId"];
        put?: never;
        post?: never;
        /**
         * Delete a user and everything they own (their runs are cancelled first)
         * @description Scope `admin` (or full access). Role `admin`.
         */
        delete: operations["deleteApiAdminUsersId"];
        options?: never;
        head?: never;
        /**
         * Rename a user, change their role or limits (rate_limit_rpm, token_budget), or disable (every credential refused, runs cancelled) or enable them
         * @description Scope `admin` (or full access). Role `admin`.
         */
        patch: operations["patchApiAdminUsersId"];
        trace?: never;
    };
    "/api/agent-defaults": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The deployment's default model (what an agent with a null model runs on) and whether gateway models can be named
         * @description Scope `agents` (or full access).
         */
        get: operations["getApiAgentDefaults"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the caller's agents
         * @description Scope `agents` (or full access).
         */
        get: operations["getApiAgents"];
        put?: never;
        /**
         * Create an agent
         * @description Full access (a JWT or an unscoped API key). Not for restricted users.
         */
        post: operations["postApiAgents"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read an agent
         * @description Scope `agents` (or full access).
         */
        get: operations["getApiAgentsId"];
        put?: never;
        post?: never;
        /**
         * Delete an agent: no new run may name it and its schedules are switched off; runs already started finish, runs and conversations stay
         * @description Full access (a JWT or an unscoped API key). Not for restricted users.
         */
        delete: operations["deleteApiAgentsId"];
        options?: never;
        head?: never;
        /**
         * Change an agent (any field of creation): the result is its next version; runs already started keep theirs
         * @description Full access (a JWT or an unscoped API key). Not for restricted users.
         */
        patch: operations["patchApiAgentsId"];
        trace?: never;
    };
    "/api/agents/{id}/versions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * An agent's versions, newest first, each with its configuration then
         * @description Scope `agents` (or full access).
         */
        get: operations["getApiAgentsIdVersions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/{id}/versions/{n}/restore": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Make version n of an agent current again, as its next version
         * @description Full access (a JWT or an unscoped API key). Not for restricted users.
         */
        post: operations["postApiAgentsIdVersionsNRestore"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/login": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Log in: an access token (JWT, 2 h) and a single-use refresh token
         * @description No credential.
         */
        post: operations["postApiAuthLogin"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/refresh": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Exchange a refresh token for a new pair (reusing a spent one revokes its session)
         * @description No credential.
         */
        post: operations["postApiAuthRefresh"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/verify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Describe the credential the request carries (any valid key or token)
         * @description Any valid API key or access token.
         */
        get: operations["getApiAuthVerify"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/chat/inject": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Inject a user message into the conversation's running execution
         * @description Scope `chat` (or full access).
         */
        post: operations["postApiChatInject"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/connectors": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the caller's connectors
         * @description Scope `connectors` (or full access).
         */
        get: operations["getApiConnectors"];
        put?: never;
        /**
         * Create a connector (an MCP tool server); header values are sealed and never returned
         * @description Scope `connectors` (or full access). Not for restricted users.
         */
        post: operations["postApiConnectors"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/connectors/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a connector
         * @description Scope `connectors` (or full access).
         */
        get: operations["getApiConnectorsId"];
        put?: never;
        post?: never;
        /**
         * Delete a connector (agents lose it)
         * @description Scope `connectors` (or full access). Not for restricted users.
         */
        delete: operations["deleteApiConnectorsId"];
        options?: never;
        head?: never;
        /**
         * Change a connector; `headers` replaces (value) or removes (null) single headers
         * @description Scope `connectors` (or full access). Not for restricted users.
         */
        patch: operations["patchApiConnectorsId"];
        trace?: never;
    };
    "/api/connectors/{id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Connect to the server and list its tools; an unreachable server is status "error", never a 5xx
         * @description Scope `connectors` (or full access). Not for restricted users.
         */
        post: operations["postApiConnectorsIdTest"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/conversations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the caller's conversations, most recently active first; filter by agent_id and by metadata[key]=value (repeatable, up to 16, all must match)
         * @description Full access (a JWT or an unscoped API key).
         */
        get: operations["getApiConversations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/conversations/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a conversation with its last 100 messages, oldest first (injected ones marked); page older ones with GET /api/conversations/{id}/messages
         * @description Full access (a JWT or an unscoped API key).
         */
        get: operations["getApiConversationsId"];
        put?: never;
        post?: never;
        /**
         * Delete a conversation for good: its messages and its runs' event streams; its runs stay for usage, without content. 409 while a run is active
         * @description Full access (a JWT or an unscoped API key).
         */
        delete: operations["deleteApiConversationsId"];
        options?: never;
        head?: never;
        /**
         * Rename a conversation or set its metadata (up to 16 string pairs, replacing the old; null clears it)
         * @description Full access (a JWT or an unscoped API key).
         */
        patch: operations["patchApiConversationsId"];
        trace?: never;
    };
    "/api/conversations/{id}/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A page of the conversation's messages, newest first: limit 1-100 (default 50), before = a message id of this conversation (the previous page's next_before)
         * @description Full access (a JWT or an unscoped API key).
         */
        get: operations["getApiConversationsIdMessages"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/dag": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run a DAG agent query, streamed as server-sent events
         * @description Scope `chat` (or full access). The credential may also come as body field `token`.
         */
        post: operations["postApiDag"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/datasets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List your datasets, newest first
         * @description Scope `chat` (or full access).
         */
        get: operations["getApiDatasets"];
        put?: never;
        /**
         * Create a dataset (add its items with POST /api/datasets/{id}/items)
         * @description Scope `chat` (or full access). Not for restricted users.
         */
        post: operations["postApiDatasets"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/datasets/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a dataset
         * @description Scope `chat` (or full access).
         */
        get: operations["getApiDatasetsId"];
        put?: never;
        post?: never;
        /**
         * Delete a dataset and its items; evals of it keep their copies and results
         * @description Scope `chat` (or full access). Not for restricted users.
         */
        delete: operations["deleteApiDatasetsId"];
        options?: never;
        head?: never;
        /**
         * Rename a dataset or change its description
         * @description Scope `chat` (or full access). Not for restricted users.
         */
        patch: operations["patchApiDatasetsId"];
        trace?: never;
    };
    "/api/datasets/{id}/items": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A dataset's items, in the order they were added
         * @description Scope `chat` (or full access).
         */
        get: operations["getApiDatasetsIdItems"];
        put?: never;
        /**
         * Add items: a JSON list (or {items}), JSONL (application/x-ndjson) or CSV (text/csv: q, expected, image_ids, other columns as metadata), or one such file as multipart; all or none
         * @description Scope `chat` (or full access). Not for restricted users.
         */
        post: operations["postApiDatasetsIdItems"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/datasets/{id}/items/{itemId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read one item
         * @description Scope `chat` (or full access).
         */
        get: operations["getApiDatasetsIdItemsItemId"];
        put?: never;
        post?: never;
        /**
         * Delete an item
         * @description Scope `chat` (or full access). Not for restricted users.
         */
        delete: operations["deleteApiDatasetsIdItemsItemId"];
        options?: never;
        head?: never;
        /**
         * Change an item's input, expected answer or metadata (evals already made keep their copy)
         * @description Scope `chat` (or full access). Not for restricted users.
         */
        patch: operations["patchApiDatasetsIdItemsItemId"];
        trace?: never;
    };
    "/api/evals": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List your evals, newest first (filter by dataset_id or agent_id)
         * @description Scope `chat` (or full access).
         */
        get: operations["getApiEvals"];
        put?: never;
        /**
         * Run an agent's version over a dataset and score each answer; 202 at once, follow its progress with GET
         * @description Scope `chat` (or full access). Not for restricted users.
         */
        post: operations["postApiEvals"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/evals/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read an eval: status, progress, each scorer's mean so far
         * @description Scope `chat` (or full access).
         */
        get: operations["getApiEvalsId"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/evals/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel an eval: no item starts after this, and the runs of running items are cancelled
         * @description Scope `chat` (or full access). Not for restricted users.
         */
        post: operations["postApiEvalsIdCancel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/evals/{id}/results": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Per item, in dataset order: its run, the answer, each score (0..1) and whether it passed
         * @description Scope `chat` (or full access).
         */
        get: operations["getApiEvalsIdResults"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/evals/compare": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Two evals of the same dataset side by side: each scorer’s means, and per item a’s wins, losses and ties against b
         * @description Scope `chat` (or full access).
         */
        get: operations["getApiEvalsCompare"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/files": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List your files, newest first
         * @description Scope `chat` (or full access).
         */
        get: operations["getApiFiles"];
        put?: never;
        /**
         * Upload an image (multipart/form-data, one part `file`): PNG, JPEG, WebP or GIF, the type read from its bytes
         * @description Scope `chat` (or full access).
         */
        post: operations["postApiFiles"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/files/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A file's record
         * @description Scope `chat` (or full access).
         */
        get: operations["getApiFilesId"];
        put?: never;
        post?: never;
        /**
         * Delete a file; messages that showed it keep its name, marked deleted
         * @description Scope `chat` (or full access).
         */
        delete: operations["deleteApiFilesId"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/files/{id}/content": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A file's bytes, as an attachment of its detected type
         * @description Scope `chat` (or full access).
         */
        get: operations["getApiFilesIdContent"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/knowledge-bases": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the caller's knowledge bases
         * @description Scope `kb` (or full access).
         */
        get: operations["getApiKnowledgeBases"];
        put?: never;
        /**
         * Create a knowledge base (embedding_model `local` or a gateway model, asked for its dimension once)
         * @description Full access (a JWT or an unscoped API key). Not for restricted users.
         */
        post: operations["postApiKnowledgeBases"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/knowledge-bases/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a knowledge base
         * @description Full access (a JWT or an unscoped API key).
         */
        get: operations["getApiKnowledgeBasesId"];
        put?: never;
        post?: never;
        /**
         * Delete a knowledge base with its documents
         * @description Full access (a JWT or an unscoped API key). Not for restricted users.
         */
        delete: operations["deleteApiKnowledgeBasesId"];
        options?: never;
        head?: never;
        /**
         * Change a knowledge base (chunk settings apply to documents added afterwards; a new embedding_model re-embeds in a worker while retrieval keeps answering)
         * @description Full access (a JWT or an unscoped API key). Not for restricted users.
         */
        patch: operations["patchApiKnowledgeBasesId"];
        trace?: never;
    };
    "/api/knowledge-bases/{id}/documents": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a knowledge base's documents
         * @description Full access (a JWT or an unscoped API key).
         */
        get: operations["getApiKnowledgeBasesIdDocuments"];
        put?: never;
        /**
         * Add a document (JSON {name, content} or a multipart upload of one .txt, .md, .html, .pdf or .docx file); ingested by a worker
         * @description Full access (a JWT or an unscoped API key). Not for restricted users.
         */
        post: operations["postApiKnowledgeBasesIdDocuments"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/knowledge-bases/{id}/documents/{documentId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read one document and its ingestion status (processing, ready or failed with its error)
         * @description Full access (a JWT or an unscoped API key).
         */
        get: operations["getApiKnowledgeBasesIdDocumentsDocumentId"];
        put?: never;
        post?: never;
        /**
         * Delete a document and its chunks
         * @description Full access (a JWT or an unscoped API key). Not for restricted users.
         */
        delete: operations["deleteApiKnowledgeBasesIdDocumentsDocumentId"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/knowledge-bases/{id}/retrieve": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Search a knowledge base (keyword, semantic or hybrid; reranked when the knowledge base has a rerank_model)
         * @description Scope `kb` (or full access).
         */
        post: operations["postApiKnowledgeBasesIdRetrieve"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/me/api-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the caller's API keys (never the full key)
         * @description Full access (a JWT or an unscoped API key).
         */
        get: operations["getApiMeApiKeys"];
        put?: never;
        /**
         * Create an API key; the full key is in this response only
         * @description Full access (a JWT or an unscoped API key). Not for restricted users.
         */
        post: operations["postApiMeApiKeys"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/me/api-keys/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Delete an API key
         * @description Full access (a JWT or an unscoped API key). Not for restricted users.
         */
        delete: operations["deleteApiMeApiKeysId"];
        options?: never;
        head?: never;
        /**
         * Rename, enable or disable an API key, or change its expiry or limits (rate_limit_rpm, token_budget)
         * @description Full access (a JWT or an unscoped API key). Not for restricted users.
         */
        patch: operations["patchApiMeApiKeysId"];
        trace?: never;
    };
    "/api/memories": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List your memories, newest first, all or of one namespace; with q, ranked by meaning (closest first, each with its score)
         * @description Scope `chat` (or full access).
         */
        get: operations["getApiMemories"];
        put?: never;
        /**
         * Add a memory to a namespace ("user" for all your agents, or an agent's id)
         * @description Scope `chat` (or full access). Not for restricted users.
         */
        post: operations["postApiMemories"];
        /**
         * Delete every memory of one namespace
         * @description Scope `chat` (or full access). Not for restricted users.
         */
        delete: operations["deleteApiMemories"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/memories/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a memory
         * @description Scope `chat` (or full access).
         */
        get: operations["getApiMemoriesId"];
        put?: never;
        post?: never;
        /**
         * Delete a memory
         * @description Scope `chat` (or full access). Not for restricted users.
         */
        delete: operations["deleteApiMemoriesId"];
        options?: never;
        head?: never;
        /**
         * Change a memory's content (embedded again) or metadata
         * @description Scope `chat` (or full access). Not for restricted users.
         */
        patch: operations["patchApiMemoriesId"];
        trace?: never;
    };
    "/api/memory-namespaces": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Your namespaces that hold memories ("user", and each agent's), with their counts
         * @description Scope `chat` (or full access).
         */
        get: operations["getApiMemoryNamespaces"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/react": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run a ReAct agent query, streamed as server-sent events
         * @description Scope `chat` (or full access). The credential may also come as body field `token`.
         */
        post: operations["postApiReact"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Start a run in the background: 202 at once; follow it with GET (?wait=N), its events, or a webhook
         * @description Scope `chat` (or full access).
         */
        post: operations["postApiRuns"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/runs/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a run; with ?wait=N (up to 60 s) the answer comes once the run is final, waits for your tool outputs (requires_action), or N seconds have passed
         * @description Scope `chat` (or full access).
         */
        get: operations["getApiRunsId"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/runs/{id}/approvals": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Approve or reject a tool call the run waits on; the last decision resumes it
         * @description Scope `chat` (or full access).
         */
        post: operations["postApiRunsIdApprovals"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/runs/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel a queued or running run
         * @description Scope `chat` (or full access).
         */
        post: operations["postApiRunsIdCancel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/runs/{id}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Replay a run's events (all, or after Last-Event-ID or ?after=), then follow it live to done
         * @description Scope `chat` (or full access).
         */
        get: operations["getApiRunsIdEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/runs/{id}/tool-outputs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The client's outputs for the client tool calls a run waits on (status requires_action); the last one resumes it
         * @description Scope `chat` (or full access).
         */
        post: operations["postApiRunsIdToolOutputs"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/schedules": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the caller's schedules, newest first
         * @description Scope `chat` (or full access).
         */
        get: operations["getApiSchedules"];
        put?: never;
        /**
         * Run a query on a cron (in a time zone) or every N seconds, as background runs
         * @description Scope `chat` (or full access). Not for restricted users.
         */
        post: operations["postApiSchedules"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/schedules/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a schedule
         * @description Scope `chat` (or full access).
         */
        get: operations["getApiSchedulesId"];
        put?: never;
        post?: never;
        /**
         * Delete a schedule (its runs stay)
         * @description Scope `chat` (or full access). Not for restricted users.
         */
        delete: operations["deleteApiSchedulesId"];
        options?: never;
        head?: never;
        /**
         * Change a schedule (cron or every_seconds replaces its timing; enabled switches it off and on)
         * @description Scope `chat` (or full access). Not for restricted users.
         */
        patch: operations["patchApiSchedulesId"];
        trace?: never;
    };
    "/api/schedules/{id}/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A schedule's runs, newest first
         * @description Scope `chat` (or full access).
         */
        get: operations["getApiSchedulesIdRuns"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/schedules/{id}/trigger": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Start the schedule's run now, in the background, as POST /api/runs does
         * @description Scope `chat` (or full access).
         */
        post: operations["postApiSchedulesIdTrigger"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the caller's webhook endpoints
         * @description Full access (a JWT or an unscoped API key).
         */
        get: operations["getApiWebhooks"];
        put?: never;
        /**
         * Subscribe an endpoint to run events; the signing secret (whsec_…) is in this response only
         * @description Full access (a JWT or an unscoped API key). Not for restricted users.
         */
        post: operations["postApiWebhooks"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a webhook endpoint
         * @description Full access (a JWT or an unscoped API key).
         */
        get: operations["getApiWebhooksId"];
        put?: never;
        post?: never;
        /**
         * Delete a webhook endpoint and its deliveries
         * @description Full access (a JWT or an unscoped API key). Not for restricted users.
         */
        delete: operations["deleteApiWebhooksId"];
        options?: never;
        head?: never;
        /**
         * Change a webhook endpoint (is_active: true switches a disabled one back on)
         * @description Full access (a JWT or an unscoped API key). Not for restricted users.
         */
        patch: operations["patchApiWebhooksId"];
        trace?: never;
    };
    "/api/webhooks/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a webhook's deliveries, newest first
         * @description Full access (a JWT or an unscoped API key).
         */
        get: operations["getApiWebhooksIdDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhooks/{id}/deliveries/{deliveryId}/redeliver": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Deliver again under the same webhook-id, with fresh attempts
         * @description Full access (a JWT or an unscoped API key). Not for restricted users.
         */
        post: operations["postApiWebhooksIdDeliveriesDeliveryIdRedeliver"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhooks/{id}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Replace the signing secret (shown once); the old one also signs for 24 h
         * @description Full access (a JWT or an unscoped API key). Not for restricted users.
         */
        post: operations["postApiWebhooksIdRotateSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The web console (DESIGN §17): a single page, every script and style served from here
         * @description No credential.
         */
        get: operations["getConsole"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/assets/{file}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The console's scripts and styles (content-hashed names, kept by the browser)
         * @description No credential.
         */
        get: operations["getConsoleAssetsFile"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/docs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The API documentation page (Swagger UI from the installed package; works offline)
         * @description No credential.
         */
        get: operations["getDocs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/docs/init.js": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The docs page's init.js
         * @description No credential.
         */
        get: operations["getDocsInit.js"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/docs/swagger-ui-bundle.js": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The docs page's swagger-ui-bundle.js
         * @description No credential.
         */
        get: operations["getDocsSwaggerUiBundle.js"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/docs/swagger-ui.css": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The docs page's swagger-ui.css
         * @description No credential.
         */
        get: operations["getDocsSwaggerUi.css"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The process is up
         * @description No credential.
         */
        get: operations["getHealthz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/mcp": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Your agents as an MCP server (Streamable HTTP, stateless): tools/list, tools/call with progress and cancellation
         * @description Scope `chat` (or full access).
         */
        post: operations["postMcp"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics of this process (METRICS_TOKEN bearer when set, else an admin credential)
         * @description No credential.
         */
        get: operations["getMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * This OpenAPI 3.1 document, generated from the route declarations
         * @description No credential.
         */
        get: operations["getOpenapi.json"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Postgres and Redis answer (else 503)
         * @description No credential.
         */
        get: operations["getReadyz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        AdminUser: {
            /** Format: date-time */
            created_at: string;
            email: string;
            /** Format: uuid */
            id: string;
            is_active: boolean;
            name: string;
            /** @description Requests per minute; null: none of its own */
            rate_limit_rpm: number | null;
            /** @enum {string} */
            role: "admin" | "member" | "restricted";
            /** @description Model tokens per UTC calendar day or month; null: none of its own */
            token_budget: {
                limit: number;
                /** @enum {string} */
                period: "day" | "month";
            } | null;
            /** @description The budget's current period: tokens used so far, when it began and when it resets; null without a budget */
            token_usage: {
                /** Format: date-time */
                period_start: string;
                /** Format: date-time */
                resets_at: string;
                used: number;
            } | null;
            /** Format: date-time */
            updated_at: string;
        };
        Agent: {
            /** @enum {string} */
            api_format: "chat" | "responses" | "native";
            connector_ids: string[];
            /** @description Tokens the model reads and writes per call (DESIGN §20); null: the model's default (local 8,192; gateway models DEFAULT_CONTEXT_WINDOW) */
            context_window: number | null;
            /** Format: date-time */
            created_at: string;
            gateway_tools: ({
                /** @constant */
                type: "web_search_preview";
            } | {
                server_label: string;
                /** Format: uri */
                server_url: string;
                /** @constant */
                type: "mcp";
            })[];
            /** Format: uuid */
            id: string;
            instructions: string;
            knowledge_base_ids: string[];
            max_iterations: number;
            max_tokens: number | null;
            /** @description DESIGN §25: its runs are given the memories closest to the question before they start, and the remember and recall tools */
            memory: boolean;
            /** @description The agent's model; null: the deployment's default model (`local`, or GATEWAY_MODEL under MODEL_PROVIDER=gateway), decided when each run starts */
            model: string | null;
            name: string;
            /** @description DESIGN §23: the JSON Schema its runs' final answers are valid against (a run's own output_schema overrides it); null: prose answers */
            output_schema: {
                [key: string]: unknown;
            } | null;
            reasoning_effort: ("minimal" | "low" | "medium" | "high") | null;
            thinking_budget: number | null;
            tool_approval: ("never" | "always") | string[];
            tools: ("calculator" | "current_time" | "knowledge_base_retrieve")[];
            /** Format: date-time */
            updated_at: string;
            /** @description DESIGN §20: 1 when created, one more for each PATCH or restore; GET /api/agents/{id}/versions lists them */
            version: number;
        };
        AgentVersion: {
            /** @enum {string} */
            api_format: "chat" | "responses" | "native";
            connector_ids: string[];
            /** @description Tokens the model reads and writes per call (DESIGN §20); null: the model's default (local 8,192; gateway models DEFAULT_CONTEXT_WINDOW) */
            context_window: number | null;
            /**
             * Format: date-time
             * @description When the version was made
             */
            created_at: string;
            gateway_tools: ({
                /** @constant */
                type: "web_search_preview";
            } | {
                server_label: string;
                /** Format: uri */
                server_url: string;
                /** @constant */
                type: "mcp";
            })[];
            instructions: string;
            knowledge_base_ids: string[];
            max_iterations: number;
            max_tokens: number | null;
            /** @description DESIGN §25: its runs are given the memories closest to the question before they start, and the remember and recall tools */
            memory: boolean;
            /** @description The agent's model; null: the deployment's default model (`local`, or GATEWAY_MODEL under MODEL_PROVIDER=gateway), decided when each run starts */
            model: string | null;
            name: string;
            /** @description DESIGN §23: the JSON Schema its runs' final answers are valid against (a run's own output_schema overrides it); null: prose answers */
            output_schema: {
                [key: string]: unknown;
            } | null;
            reasoning_effort: ("minimal" | "low" | "medium" | "high") | null;
            thinking_budget: number | null;
            tool_approval: ("never" | "always") | string[];
            tools: ("calculator" | "current_time" | "knowledge_base_retrieve")[];
            version: number;
        };
        AuthError: {
            /** @enum {string} */
            error: "unauthorized" | "invalid_token" | "token_expired";
            message: string;
        };
        Connector: {
            /** Format: date-time */
            created_at: string;
            description: string;
            /** Format: uuid */
            id: string;
            is_active: boolean;
            /** @constant */
            kind: "mcp";
            last_checked_at: string | null;
            last_error: string | null;
            name: string;
            /** @description The names of the configured headers; their values are never returned */
            secret_headers: string[];
            /** @enum {string} */
            status: "unknown" | "ok" | "error";
            tools: {
                description: string;
                name: string;
            }[];
            transport: string;
            /** Format: date-time */
            updated_at: string;
            url: string;
        };
        ConnectorTestResult: {
            error?: string;
            latency_ms: number;
            /** @enum {string} */
            status: "ok" | "error";
            tools: {
                description: string;
                input_schema: {
                    [key: string]: unknown;
                };
                name: string;
            }[];
        };
        Conversation: {
            agent_id: string | null;
            /** Format: date-time */
            created_at: string;
            /** Format: uuid */
            id: string;
            /** @description At most 16 string pairs (keys up to 64 characters, values up to 512), as OpenAI's; {} when none */
            metadata: {
                [key: string]: string;
            };
            /** @description The conversation's oldest turns, summarised by its agent's model once the transcript outgrew 80% of the context window (DESIGN §20); null until then. The messages themselves are kept */
            summary: string | null;
            /** @description The last message the summary covers; later runs extend it from there */
            summary_through: string | null;
            title: string;
            /** Format: date-time */
            updated_at: string;
        };
        Document: {
            chunk_count: number;
            content_type: string;
            /** Format: date-time */
            created_at: string;
            error: string | null;
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            knowledge_base_id: string;
            name: string;
            size_bytes: number;
            /** @enum {string} */
            status: "processing" | "ready" | "failed";
            /** Format: date-time */
            updated_at: string;
        };
        Error: {
            error: string;
            message: string;
        };
        File: {
            /**
             * @description Read from the bytes, not from the upload
             * @enum {string}
             */
            content_type: "image/png" | "image/jpeg" | "image/webp" | "image/gif";
            /** Format: date-time */
            created_at: string;
            filename: string;
            height: number;
            /** Format: uuid */
            id: string;
            /** @description Hex SHA-256 of the bytes */
            sha256: string;
            size_bytes: number;
            /** @description Pixels, as the image is shown (EXIF orientation applied) */
            width: number;
        };
        HTTPValidationError: {
            detail: {
                ctx?: {
                    [key: string]: unknown;
                };
                input?: unknown;
                loc: (string | number)[];
                msg: string;
                type: string;
            }[];
        };
        InternalError: {
            /** @constant */
            error: "internal_error";
            message: string;
            request_id: string | null;
        };
        KnowledgeBase: {
            chunk_overlap: number;
            chunk_size: number;
            /** @enum {string} */
            chunk_strategy: "fixed" | "sentence" | "paragraph" | "recursive";
            /** Format: date-time */
            created_at: string;
            description: string;
            document_count: number;
            embedding_dimensions: number;
            /** @description `local` (the built-in lexical embedder) or a gateway embedding model */
            embedding_model: string;
            /** @description Why the last re-embedding stopped (the previous vectors were kept) */
            error: string | null;
            /** Format: uuid */
            id: string;
            /** @description While a new embedding model re-embeds the chunks: its progress (retrieval answers from the previous vectors meanwhile) */
            indexing: {
                done: number;
                model: string;
                total: number;
            } | null;
            is_active: boolean;
            name: string;
            rerank_model: string | null;
            /** @enum {string} */
            retrieval_mode: "keyword" | "semantic" | "hybrid";
            /** @enum {string} */
            status: "ready" | "processing" | "indexing";
            total_chunks: number;
            /** Format: date-time */
            updated_at: string;
        };
        Message: {
            /** @description The images the message was sent with (image_ids) */
            attachments: ({
                /**
                 * @description Read from the bytes, not from the upload
                 * @enum {string}
                 */
                content_type: "image/png" | "image/jpeg" | "image/webp" | "image/gif";
                /** @constant */
                deleted: false;
                filename: string;
                height: number;
                /** Format: uuid */
                id: string;
                size_bytes: number;
                /** @description Pixels, as the image is shown (EXIF orientation applied) */
                width: number;
            } | {
                /** @constant */
                deleted: true;
                filename: string;
                /** Format: uuid */
                id: string;
            })[];
            /** @description The knowledge-base passages an answer used; empty for user messages and answers without sources */
            citations: {
                chunk_id: string;
                /** Format: uuid */
                document_id: string;
                document_name: string;
                page: number | null;
            }[];
            content: string;
            /** Format: date-time */
            created_at: string;
            /** Format: uuid */
            id: string;
            injected: boolean;
            /** @enum {string} */
            role: "user" | "assistant" | "system";
            run_id: string | null;
        };
        MessagePage: {
            /** @description Older messages remain */
            has_more: boolean;
            items: components["schemas"]["Message"][];
            limit: number;
            /** @description The `before` of the next (older) page: the oldest message of this one; null when none remain */
            next_before: string | null;
        };
        RetrieveResult: {
            query: string;
            records: {
                chunk_id: string;
                content: string;
                /** Format: uuid */
                document_id: string;
                document_name: string;
                /** @description The PDF page of the chunk; null for formats without pages */
                page: number | null;
                position: number;
                score: number;
            }[];
            /** @description true when the rerank model ordered the records; false when it failed and the fused order stands; null without one */
            reranked: boolean | null;
            /** @enum {string} */
            retrieval_mode: "keyword" | "semantic" | "hybrid";
        };
        Run: {
            agent_id: string | null;
            /** @description The version of its agent the run started with and runs on to the end, also after a crash (DESIGN §20); null without an agent */
            agent_version: number | null;
            answer: string | null;
            /** Format: uuid */
            conversation_id: string;
            /** @description What the run cost at its model's price when it ended (DESIGN §18); null until it ends, or when the model has no price */
            cost: number | null;
            /** Format: date-time */
            created_at: string;
            error: {
                code: string;
                message: string;
            } | null;
            /** @description The eval whose dataset item this run answers (DESIGN §24); null for other runs */
            eval_id: string | null;
            finish_reason: ("stop" | "length" | "content_filter") | null;
            finished_at: string | null;
            /** Format: uuid */
            id: string;
            /** @enum {string} */
            mode: "react" | "dag";
            /** @description DESIGN §23: the answer parsed as JSON, valid against the output schema of the run (or of its agent); null for prose runs */
            output: unknown;
            /** @description The question; null once its conversation was deleted (the record stays for usage, without content) */
            query: string | null;
            /** @description The client tool calls the run waits on while `requires_action` (DESIGN §23): answer them with POST /api/runs/{id}/tool-outputs; null otherwise */
            required_action: {
                tool_calls: {
                    arguments: {
                        [key: string]: unknown;
                    };
                    id: string;
                    name: string;
                }[];
            } | null;
            /** @description The schedule that started the run (DESIGN §19); null for runs started otherwise */
            schedule_id: string | null;
            started_at: string | null;
            /** @enum {string} */
            status: "queued" | "running" | "waiting" | "requires_action" | "succeeded" | "failed" | "cancelled" | "interrupted";
            /** @description The OpenTelemetry trace of the run (DESIGN §18): the request that started it, its worker attempts, model and tool calls; null when tracing is off */
            trace_id: string | null;
            usage: {
                [key: string]: number | boolean;
            } | null;
            user_metadata: string | null;
        };
        RunEvent: {
            data: {
                agent_id: string | null;
                conversation_id: string;
                /** @enum {string} */
                mode: "react" | "dag";
                run_id: string;
                /** @constant */
                status: "queued";
                trace_id?: string | null;
            };
            /** @constant */
            event: "run";
            id: string;
        } | {
            data: {
                /** @enum {string} */
                status: "running" | "resumed" | "waiting" | "requires_action";
            };
            /** @constant */
            event: "status";
            id: string;
        } | {
            data: {
                iteration: number;
                text: string;
            };
            /** @constant */
            event: "thought";
            id: string;
        } | {
            data: {
                iteration: number;
                text: string;
            };
            /** @constant */
            event: "token";
            id: string;
        } | {
            data: {
                arguments: {
                    [key: string]: unknown;
                };
                call_id: string;
                iteration: number;
                name: string;
            };
            /** @constant */
            event: "tool_call";
            id: string;
        } | {
            data: {
                arguments: {
                    [key: string]: unknown;
                };
                call_id: string;
                iteration: number;
                name: string;
            };
            /** @constant */
            event: "approval_required";
            id: string;
        } | {
            data: {
                iteration: number;
                tool_calls: {
                    arguments: {
                        [key: string]: unknown;
                    };
                    id: string;
                    name: string;
                }[];
            };
            /** @constant */
            event: "client_tool_calls";
            id: string;
        } | {
            data: {
                call_id: string;
                is_error: boolean;
                iteration: number;
                name: string;
                output: unknown;
            };
            /** @constant */
            event: "tool_result";
            id: string;
        } | {
            data: {
                nodes: {
                    depends_on: string[];
                    id: string;
                    task: string;
                }[];
            };
            /** @constant */
            event: "plan";
            id: string;
        } | {
            data: {
                node_id: string;
                output?: string;
                /** @enum {string} */
                status: "started" | "succeeded" | "failed";
            };
            /** @constant */
            event: "node";
            id: string;
        } | {
            data: {
                content: string;
                iteration: number;
                message_id: string;
            };
            /** @constant */
            event: "injected";
            id: string;
        } | {
            data: {
                summarized_messages: number;
                tokens_after: number;
                tokens_before: number;
            };
            /** @constant */
            event: "compaction";
            id: string;
        } | {
            data: {
                ids: string[];
                memories: {
                    content: string;
                    id: string;
                    namespace: string;
                    score: number;
                }[];
            };
            /** @constant */
            event: "memory";
            id: string;
        } | {
            data: {
                citations?: {
                    chunk_id: string;
                    document_id: string;
                    document_name: string;
                    page: number | null;
                }[];
                content: string;
                /** @enum {string} */
                finish_reason: "stop" | "length" | "content_filter";
                message_id: string;
                output?: unknown;
            };
            /** @constant */
            event: "answer";
            id: string;
        } | {
            data: {
                code: string;
                message: string;
                retryable: boolean;
            };
            /** @constant */
            event: "error";
            id: string;
        } | {
            data: {
                duration_ms: number;
                /** @enum {string} */
                status: "succeeded" | "failed" | "cancelled" | "interrupted";
                usage: {
                    completion_tokens: number;
                    estimated?: boolean;
                    prompt_tokens: number;
                    reasoning_tokens: number;
                    total_tokens: number;
                };
            };
            /** @constant */
            event: "done";
            id: string;
        };
        Schedule: {
            agent_id: string | null;
            /** @description The conversation every run continues; null: each run starts a new one */
            conversation_id: string | null;
            /** Format: date-time */
            created_at: string;
            /** @description 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first, read in `timezone`; null when every_seconds is set */
            cron: string | null;
            enabled: boolean;
            /** @description Seconds between runs, the first one interval after it is set; null when cron is set */
            every_seconds: number | null;
            /** Format: uuid */
            id: string;
            last_run_at: string | null;
            last_run_id: string | null;
            /** @description Why the last skipped tick started no run */
            last_skip_reason: ("conversation_busy" | "active_run_limit" | "insufficient_quota" | "agent_deleted" | "conversation_deleted" | "unavailable") | null;
            /** @enum {string} */
            mode: "react" | "dag";
            name: string;
            /** @description When the next tick is planned; null while disabled */
            next_run_at: string | null;
            q: string;
            /** @description Ticks that started no run: the conversation's previous run still active, the active-run cap, a spent token budget, or the agent or conversation gone */
            skipped_runs: number;
            /** @description The IANA time zone the cron is read in (DST follows it) */
            timezone: string;
            /** Format: date-time */
            updated_at: string;
        };
        StreamGone: {
            answer: string | null;
            /** @constant */
            error: "gone";
            message: string;
            /** @enum {string} */
            status: "succeeded" | "failed" | "cancelled" | "interrupted";
            usage: {
                [key: string]: number | boolean;
            } | null;
        };
        TokenPair: {
            /** @description A JWT, valid for expires_in seconds */
            access_token: string;
            expires_in: number;
            /** @description Single use: exchange it at POST /api/auth/refresh */
            refresh_token: string;
            /** @constant */
            token_type: "bearer";
            user: components["schemas"]["User"];
        };
        User: {
            /** Format: date-time */
            created_at: string;
            email: string;
            /** Format: uuid */
            id: string;
            name: string;
            /** @enum {string} */
            role: "admin" | "member" | "restricted";
        };
        UserApiKeyInfo: {
            /** Format: date-time */
            created_at: string;
            expires_at: string | null;
            /** Format: uuid */
            id: string;
            is_active: boolean;
            key_prefix: string;
            last_used_at: string | null;
            name: string;
            /** @description Requests per minute; null: none of its own */
            rate_limit_rpm: number | null;
            /** @description Space-separated scopes (chat, kb, agents, connectors, admin); null: full access */
            scopes: string | null;
            /** @description Model tokens per UTC calendar day or month; null: none of its own */
            token_budget: {
                limit: number;
                /** @enum {string} */
                period: "day" | "month";
            } | null;
            /** @description The budget's current period: tokens used so far, when it began and when it resets; null without a budget */
            token_usage: {
                /** Format: date-time */
                period_start: string;
                /** Format: date-time */
                resets_at: string;
                used: number;
            } | null;
            total_requests: number;
        };
        Webhook: {
            consecutive_failures: number;
            /** Format: date-time */
            created_at: string;
            description: string;
            disabled_reason: string | null;
            events: ("run.succeeded" | "run.failed" | "run.cancelled" | "run.interrupted" | "run.waiting" | "run.requires_action" | "eval.succeeded" | "eval.failed")[];
            /** Format: uuid */
            id: string;
            is_active: boolean;
            /** Format: date-time */
            updated_at: string;
            url: string;
        };
        WebhookDelivery: {
            attempts: number;
            /** Format: date-time */
            created_at: string;
            eval_id: string | null;
            /** @enum {string} */
            event: "run.succeeded" | "run.failed" | "run.cancelled" | "run.interrupted" | "run.waiting" | "run.requires_action" | "eval.succeeded" | "eval.failed";
            /** Format: uuid */
            id: string;
            last_error: string | null;
            last_status_code: number | null;
            next_attempt_at: string | null;
            run_id: string | null;
            /** @enum {string} */
            status: "pending" | "delivered" | "failed";
        };
    };
    responses: {
        /** @description No valid credential */
        401: {
            headers: {
                /** @description Bearer */
                "WWW-Authenticate": string;
                /** @description The request id (kept from the request when sane), in every log line of the request */
                "X-Request-Id": string;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["AuthError"];
            };
        };
        /** @description The credential may not call this */
        403: {
            headers: {
                /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                RateLimit?: string;
                /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                "RateLimit-Policy"?: string;
                /** @description The request id (kept from the request when sane), in every log line of the request */
                "X-Request-Id": string;
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    /** @enum {string} */
                    error: "forbidden";
                    message: string;
                };
            };
        };
        /** @description Not found */
        404: {
            headers: {
                /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                RateLimit?: string;
                /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                "RateLimit-Policy"?: string;
                /** @description The request id (kept from the request when sane), in every log line of the request */
                "X-Request-Id": string;
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    /** @enum {string} */
                    error: "not_found";
                    message: string;
                };
            };
        };
        /** @description Conflict */
        409: {
            headers: {
                /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                RateLimit?: string;
                /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                "RateLimit-Policy"?: string;
                /** @description The request id (kept from the request when sane), in every log line of the request */
                "X-Request-Id": string;
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    /** @enum {string} */
                    error: "no_active_execution" | "conversation_busy" | "last_admin" | "endpoint_disabled" | "approval_not_pending" | "schedule_limit" | "not_requires_action" | "tool_output_not_pending" | "dataset_full" | "dataset_limit" | "eval_final" | "memory_limit";
                    message: string;
                };
            };
        };
        /** @description Gone */
        410: {
            headers: {
                /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                RateLimit?: string;
                /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                "RateLimit-Policy"?: string;
                /** @description The request id (kept from the request when sane), in every log line of the request */
                "X-Request-Id": string;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["StreamGone"];
            };
        };
        /** @description Body too large */
        413: {
            headers: {
                /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                RateLimit?: string;
                /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                "RateLimit-Policy"?: string;
                /** @description The request id (kept from the request when sane), in every log line of the request */
                "X-Request-Id": string;
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    /** @enum {string} */
                    error: "payload_too_large";
                    message: string;
                };
            };
        };
        /** @description Unsupported media type */
        415: {
            headers: {
                /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                RateLimit?: string;
                /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                "RateLimit-Policy"?: string;
                /** @description The request id (kept from the request when sane), in every log line of the request */
                "X-Request-Id": string;
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    /** @enum {string} */
                    error: "unsupported_media_type";
                    message: string;
                };
            };
        };
        /** @description Invalid input */
        422: {
            headers: {
                /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                RateLimit?: string;
                /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                "RateLimit-Policy"?: string;
                /** @description The request id (kept from the request when sane), in every log line of the request */
                "X-Request-Id": string;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["HTTPValidationError"];
            };
        };
        /** @description Rate limited or saturated: retry after Retry-After */
        429: {
            headers: {
                /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                RateLimit?: string;
                /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                "RateLimit-Policy"?: string;
                /** @description Seconds to wait before retrying */
                "Retry-After": string;
                /** @description The request id (kept from the request when sane), in every log line of the request */
                "X-Request-Id": string;
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    /** @enum {string} */
                    error: "rate_limited" | "insufficient_quota";
                    message: string;
                };
            };
        };
        /** @description Internal error */
        500: {
            headers: {
                /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                RateLimit?: string;
                /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                "RateLimit-Policy"?: string;
                /** @description The request id (kept from the request when sane), in every log line of the request */
                "X-Request-Id": string;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["InternalError"];
            };
        };
        /** @description The model gateway refused the call (e.g. model_not_found) */
        502: {
            headers: {
                /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                RateLimit?: string;
                /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                "RateLimit-Policy"?: string;
                /** @description The request id (kept from the request when sane), in every log line of the request */
                "X-Request-Id": string;
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    error: string;
                    message: string;
                };
            };
        };
        /** @description A backing service is unavailable: retry after Retry-After */
        503: {
            headers: {
                /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                RateLimit?: string;
                /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                "RateLimit-Policy"?: string;
                /** @description Seconds to wait before retrying */
                "Retry-After": string;
                /** @description The request id (kept from the request when sane), in every log line of the request */
                "X-Request-Id": string;
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    checks?: {
                        [key: string]: string;
                    };
                    /** @constant */
                    error: "unavailable";
                    message: string;
                };
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getApiAdminApiKeys: {
        parameters: {
            query?: {
                is_active?: boolean;
                page?: number;
                size?: number;
                user_id?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            /** Format: date-time */
                            created_at: string;
                            expires_at: string | null;
                            /** Format: uuid */
                            id: string;
                            is_active: boolean;
                            key_prefix: string;
                            last_used_at: string | null;
                            name: string;
                            /** @description Requests per minute; null: none of its own */
                            rate_limit_rpm: number | null;
                            /** @description Space-separated scopes (chat, kb, agents, connectors, admin); null: full access */
                            scopes: string | null;
                            /** @description Model tokens per UTC calendar day or month; null: none of its own */
                            token_budget: {
                                limit: number;
                                /** @enum {string} */
                                period: "day" | "month";
                            } | null;
                            /** @description The budget's current period: tokens used so far, when it began and when it resets; null without a budget */
                            token_usage: {
                                /** Format: date-time */
                                period_start: string;
                                /** Format: date-time */
                                resets_at: string;
                                used: number;
                            } | null;
                            total_requests: number;
                            /** Format: uuid */
                            user_id: string;
                        }[];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    deleteApiAdminApiKeysId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    patchApiAdminApiKeysId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    expires_at?: string | null;
                    is_active?: boolean;
                    name?: string;
                    rate_limit_rpm?: number | null;
                    token_budget?: {
                        limit: number;
                        /** @enum {string} */
                        period: "day" | "month";
                    } | null;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        expires_at: string | null;
                        /** Format: uuid */
                        id: string;
                        is_active: boolean;
                        key_prefix: string;
                        last_used_at: string | null;
                        name: string;
                        /** @description Requests per minute; null: none of its own */
                        rate_limit_rpm: number | null;
                        /** @description Space-separated scopes (chat, kb, agents, connectors, admin); null: full access */
                        scopes: string | null;
                        /** @description Model tokens per UTC calendar day or month; null: none of its own */
                        token_budget: {
                            limit: number;
                            /** @enum {string} */
                            period: "day" | "month";
                        } | null;
                        /** @description The budget's current period: tokens used so far, when it began and when it resets; null without a budget */
                        token_usage: {
                            /** Format: date-time */
                            period_start: string;
                            /** Format: date-time */
                            resets_at: string;
                            used: number;
                        } | null;
                        total_requests: number;
                        /** Format: uuid */
                        user_id: string;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiAdminAuditLog: {
        parameters: {
            query?: {
                action?: string;
                actor_id?: string;
                from?: string;
                page?: number;
                size?: number;
                target_id?: string;
                to?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            action: string;
                            actor_user_id: string | null;
                            /** Format: date-time */
                            at: string;
                            credential: string | null;
                            details: {
                                [key: string]: unknown;
                            };
                            id: number;
                            ip: string | null;
                            request_id: string | null;
                            target_id: string | null;
                            target_type: string | null;
                        }[];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiAdminDashboardTicket: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Created */
            201: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        enter_url: string;
                        /** Format: date-time */
                        expires_at: string;
                        /** @description Single use; POST it as the form field `ticket` to `enter_url` (a same-origin form) before expires_at */
                        ticket: string;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiAdminModelPrices: {
        parameters: {
            query?: {
                page?: number;
                size?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            input_per_million: number;
                            model: string;
                            output_per_million: number;
                            /** Format: date-time */
                            updated_at: string;
                        }[];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiAdminModelPricesModel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The model name exactly as agents name it (case-sensitive); a "/" in it is sent as %2F */
                model: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        input_per_million: number;
                        model: string;
                        output_per_million: number;
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    putApiAdminModelPricesModel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The model name exactly as agents name it (case-sensitive); a "/" in it is sent as %2F */
                model: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description What a million input (prompt) tokens cost (0 to 1,000,000) */
                    input_per_million: number;
                    /** @description What a million output (completion, reasoning included) tokens cost (0 to 1,000,000) */
                    output_per_million: number;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        input_per_million: number;
                        model: string;
                        output_per_million: number;
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            /** @description Created */
            201: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        input_per_million: number;
                        model: string;
                        output_per_million: number;
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    deleteApiAdminModelPricesModel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The model name exactly as agents name it (case-sensitive); a "/" in it is sent as %2F */
                model: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiAdminQueues: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        queues: {
                            active: number;
                            completed: number;
                            delayed: number;
                            failed: number;
                            is_paused: boolean;
                            name: string;
                            paused: number;
                            waiting: number;
                            workers: number | null;
                        }[];
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiAdminRuns: {
        parameters: {
            query?: {
                eval_id?: string;
                from?: string;
                mode?: "react" | "dag";
                page?: number;
                size?: number;
                status?: "queued" | "running" | "waiting" | "requires_action" | "succeeded" | "failed" | "cancelled" | "interrupted";
                to?: string;
                user_id?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            /** @description Whether the run's agent has been deleted since (DESIGN §20: its runs stay, agent_id kept); false without an agent */
                            agent_deleted: boolean;
                            agent_id: string | null;
                            /** @description The version of its agent the run started with and runs on to the end, also after a crash (DESIGN §20); null without an agent */
                            agent_version: number | null;
                            answer: string | null;
                            /** Format: uuid */
                            conversation_id: string;
                            /** @description What the run cost at its model's price when it ended (DESIGN §18); null until it ends, or when the model has no price */
                            cost: number | null;
                            /** Format: date-time */
                            created_at: string;
                            error: {
                                code: string;
                                message: string;
                            } | null;
                            /** @description The eval whose dataset item this run answers (DESIGN §24); null for other runs */
                            eval_id: string | null;
                            finish_reason: ("stop" | "length" | "content_filter") | null;
                            finished_at: string | null;
                            /** Format: uuid */
                            id: string;
                            /** @enum {string} */
                            mode: "react" | "dag";
                            /** @description DESIGN §23: the answer parsed as JSON, valid against the output schema of the run (or of its agent); null for prose runs */
                            output: unknown;
                            /** @description The question; null once its conversation was deleted (the record stays for usage, without content) */
                            query: string | null;
                            /** @description The client tool calls the run waits on while `requires_action` (DESIGN §23): answer them with POST /api/runs/{id}/tool-outputs; null otherwise */
                            required_action: {
                                tool_calls: {
                                    arguments: {
                                        [key: string]: unknown;
                                    };
                                    id: string;
                                    name: string;
                                }[];
                            } | null;
                            /** @description The schedule that started the run (DESIGN §19); null for runs started otherwise */
                            schedule_id: string | null;
                            started_at: string | null;
                            /** @enum {string} */
                            status: "queued" | "running" | "waiting" | "requires_action" | "succeeded" | "failed" | "cancelled" | "interrupted";
                            /** @description The OpenTelemetry trace of the run (DESIGN §18): the request that started it, its worker attempts, model and tool calls; null when tracing is off */
                            trace_id: string | null;
                            usage: {
                                [key: string]: number | boolean;
                            } | null;
                            /** Format: uuid */
                            user_id: string;
                            user_metadata: string | null;
                        }[];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiAdminRunsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Whether the run's agent has been deleted since (DESIGN §20: its runs stay, agent_id kept); false without an agent */
                        agent_deleted: boolean;
                        agent_id: string | null;
                        /** @description The version of its agent the run started with and runs on to the end, also after a crash (DESIGN §20); null without an agent */
                        agent_version: number | null;
                        answer: string | null;
                        /** Format: uuid */
                        conversation_id: string;
                        /** @description What the run cost at its model's price when it ended (DESIGN §18); null until it ends, or when the model has no price */
                        cost: number | null;
                        /** Format: date-time */
                        created_at: string;
                        error: {
                            code: string;
                            message: string;
                        } | null;
                        /** @description The eval whose dataset item this run answers (DESIGN §24); null for other runs */
                        eval_id: string | null;
                        finish_reason: ("stop" | "length" | "content_filter") | null;
                        finished_at: string | null;
                        /** Format: uuid */
                        id: string;
                        /** @enum {string} */
                        mode: "react" | "dag";
                        /** @description DESIGN §23: the answer parsed as JSON, valid against the output schema of the run (or of its agent); null for prose runs */
                        output: unknown;
                        /** @description The question; null once its conversation was deleted (the record stays for usage, without content) */
                        query: string | null;
                        /** @description The client tool calls the run waits on while `requires_action` (DESIGN §23): answer them with POST /api/runs/{id}/tool-outputs; null otherwise */
                        required_action: {
                            tool_calls: {
                                arguments: {
                                    [key: string]: unknown;
                                };
                                id: string;
                                name: string;
                            }[];
                        } | null;
                        /** @description The schedule that started the run (DESIGN §19); null for runs started otherwise */
                        schedule_id: string | null;
                        started_at: string | null;
                        /** @enum {string} */
                        status: "queued" | "running" | "waiting" | "requires_action" | "succeeded" | "failed" | "cancelled" | "interrupted";
                        /** @description The OpenTelemetry trace of the run (DESIGN §18): the request that started it, its worker attempts, model and tool calls; null when tracing is off */
                        trace_id: string | null;
                        usage: {
                            [key: string]: number | boolean;
                        } | null;
                        /** Format: uuid */
                        user_id: string;
                        user_metadata: string | null;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiAdminRunsIdCancel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Accepted */
            202: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        run_id: string;
                        /** @constant */
                        status: "cancelling";
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            409: components["responses"]["409"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiAdminRunsIdEvents: {
        parameters: {
            query?: {
                after?: string;
            };
            header?: {
                "last-event-id"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /**
             * @description The run as server-sent events: each event is `id: <stream entry id>`, `event: <type>`, `data: <one-line JSON>`;
             *     `run` always comes first and `done` always last; a comment line `: ping` every 15 s. Headers `X-Run-Id` and `X-Conversation-Id` name the run.
             *     Resume after a dropped connection with `GET /api/runs/{id}/events` and `Last-Event-ID`.
             *
             *     | event | data |
             *     |---|---|
             *     | `run` | `{run_id, conversation_id, agent_id, mode, status: "queued"}` (always first) |
             *     | `status` | `{status: "running" \| "resumed" \| "waiting" \| "requires_action"}` |
             *     | `thought` | `{iteration, text}` |
             *     | `token` | `{iteration, text}` (incremental answer text) |
             *     | `tool_call` | `{iteration, call_id, name, arguments}` |
             *     | `client_tool_calls` | `{iteration, tool_calls: [{id, name, arguments}]}`: calls of the run's `client_tools` for the client to run (DESIGN §23), before `status: requires_action`; answer with POST /api/runs/{id}/tool-outputs |
             *     | `approval_required` | `{iteration, call_id, name, arguments}` (decide with POST /api/runs/{id}/approvals) |
             *     | `tool_result` | `{iteration, call_id, name, output, is_error}` |
             *     | `plan` | `{nodes: [{id, task, depends_on}]}` (DAG) |
             *     | `node` | `{node_id, status: "started" \| "succeeded" \| "failed", output?}` (DAG) |
             *     | `injected` | `{message_id, content, iteration}` |
             *     | `compaction` | `{summarized_messages, tokens_before, tokens_after}`: the oldest turns were folded into the conversation's `summary` to fit the agent's `context_window` (DESIGN §20) |
             *     | `memory` | `{ids, memories: [{id, namespace, content, score}]}`: the user's memories the run was given before its first model call, closest first (agents with `memory: true`, DESIGN §25; an empty list when none) |
             *     | `answer` | `{message_id, content, finish_reason: "stop" \| "length" \| "content_filter", citations: [{chunk_id, document_id, document_name, page}]}` |
             *     | `error` | `{code, message, retryable}` |
             *     | `done` | `{status: "succeeded" \| "failed" \| "cancelled", usage, duration_ms}` (always last) |
             */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The run's conversation */
                    "X-Conversation-Id": string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    /** @description The run being streamed */
                    "X-Run-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["RunEvent"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            410: components["responses"]["410"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiAdminUsage: {
        parameters: {
            query?: {
                from?: string;
                group_by?: "user" | "day";
                page?: number;
                size?: number;
                to?: string;
                user_id?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: date-time */
                        from: string;
                        /** @enum {string} */
                        group_by: "user" | "day";
                        items: {
                            cancelled: number;
                            completion_tokens: number;
                            /** @description The sum of the row's run costs where their models had a price (DESIGN §18); null when no run of the row had one */
                            cost: number | null;
                            failed: number;
                            /** @description The user id, or the UTC day (YYYY-MM-DD) */
                            key: string;
                            prompt_tokens: number;
                            reasoning_tokens: number;
                            runs: number;
                            succeeded: number;
                        }[];
                        page: number;
                        pages: number;
                        size: number;
                        /** Format: date-time */
                        to: string;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiAdminUsers: {
        parameters: {
            query?: {
                is_active?: boolean;
                page?: number;
                q?: string;
                role?: "admin" | "member" | "restricted";
                size?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: components["schemas"]["AdminUser"][];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiAdminUsers: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** Format: email */
                    email: string;
                    name?: string;
                    password?: string;
                    /** @enum {string} */
                    role: "admin" | "member" | "restricted";
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        email: string;
                        /** Format: uuid */
                        id: string;
                        is_active: boolean;
                        name: string;
                        /** @description The generated password, when none was sent: shown in this response only */
                        password?: string;
                        /** @description Requests per minute; null: none of its own */
                        rate_limit_rpm: number | null;
                        /** @enum {string} */
                        role: "admin" | "member" | "restricted";
                        /** @description Model tokens per UTC calendar day or month; null: none of its own */
                        token_budget: {
                            limit: number;
                            /** @enum {string} */
                            period: "day" | "month";
                        } | null;
                        /** @description The budget's current period: tokens used so far, when it began and when it resets; null without a budget */
                        token_usage: {
                            /** Format: date-time */
                            period_start: string;
                            /** Format: date-time */
                            resets_at: string;
                            used: number;
                        } | null;
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiAdminUsersId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        counts: {
                            active_runs: number;
                            agents: number;
                            api_keys: number;
                            connectors: number;
                            conversations: number;
                            knowledge_bases: number;
                            runs: number;
                        };
                        /** Format: date-time */
                        created_at: string;
                        email: string;
                        /** Format: uuid */
                        id: string;
                        is_active: boolean;
                        name: string;
                        /** @description Requests per minute; null: none of its own */
                        rate_limit_rpm: number | null;
                        /** @enum {string} */
                        role: "admin" | "member" | "restricted";
                        /** @description Model tokens per UTC calendar day or month; null: none of its own */
                        token_budget: {
                            limit: number;
                            /** @enum {string} */
                            period: "day" | "month";
                        } | null;
                        /** @description The budget's current period: tokens used so far, when it began and when it resets; null without a budget */
                        token_usage: {
                            /** Format: date-time */
                            period_start: string;
                            /** Format: date-time */
                            resets_at: string;
                            used: number;
                        } | null;
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    deleteApiAdminUsersId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            409: components["responses"]["409"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    patchApiAdminUsersId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    is_active?: boolean;
                    name?: string;
                    rate_limit_rpm?: number | null;
                    /** @enum {string} */
                    role?: "admin" | "member" | "restricted";
                    token_budget?: {
                        limit: number;
                        /** @enum {string} */
                        period: "day" | "month";
                    } | null;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdminUser"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            409: components["responses"]["409"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiAgentDefaults: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description A model gateway is configured (GATEWAY_URL): agents may name gateway models, and the API format, reasoning, thinking budget and gateway tools apply to them */
                        gateway: boolean;
                        /** @description The deployment's default model: what an agent whose model is null runs on (`local`, or GATEWAY_MODEL under MODEL_PROVIDER=gateway) */
                        model: string;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiAgents: {
        parameters: {
            query?: {
                page?: number;
                size?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: components["schemas"]["Agent"][];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiAgents: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @default chat
                     * @enum {string}
                     */
                    api_format?: "chat" | "responses" | "native";
                    /** @default [] */
                    connector_ids?: string[];
                    /** @default null */
                    context_window?: number | null;
                    /** @default [] */
                    gateway_tools?: ({
                        /** @constant */
                        type: "web_search_preview";
                    } | {
                        server_label: string;
                        /** Format: uri */
                        server_url: string;
                        /** @constant */
                        type: "mcp";
                    })[];
                    /** @default  */
                    instructions?: string;
                    /** @default [] */
                    knowledge_base_ids?: string[];
                    /** @default 8 */
                    max_iterations?: number;
                    /** @default null */
                    max_tokens?: number | null;
                    /** @default false */
                    memory?: boolean;
                    /** @default null */
                    model?: string | null;
                    name: string;
                    /** @default null */
                    output_schema?: unknown | null;
                    /** @default null */
                    reasoning_effort?: ("minimal" | "low" | "medium" | "high") | null;
                    /** @default null */
                    thinking_budget?: number | null;
                    /** @default never */
                    tool_approval?: ("never" | "always") | string[];
                    /**
                     * @default [
                     *       "calculator",
                     *       "current_time"
                     *     ]
                     */
                    tools?: ("calculator" | "current_time" | "knowledge_base_retrieve")[];
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Agent"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiAgentsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Agent"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    deleteApiAgentsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    patchApiAgentsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @enum {string} */
                    api_format?: "chat" | "responses" | "native";
                    connector_ids?: string[];
                    context_window?: number | null;
                    gateway_tools?: ({
                        /** @constant */
                        type: "web_search_preview";
                    } | {
                        server_label: string;
                        /** Format: uri */
                        server_url: string;
                        /** @constant */
                        type: "mcp";
                    })[];
                    instructions?: string;
                    knowledge_base_ids?: string[];
                    max_iterations?: number;
                    max_tokens?: number | null;
                    memory?: boolean;
                    model?: string | null;
                    name?: string;
                    output_schema?: unknown | null;
                    reasoning_effort?: ("minimal" | "low" | "medium" | "high") | null;
                    thinking_budget?: number | null;
                    tool_approval?: ("never" | "always") | string[];
                    tools?: ("calculator" | "current_time" | "knowledge_base_retrieve")[];
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Agent"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiAgentsIdVersions: {
        parameters: {
            query?: {
                page?: number;
                size?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: components["schemas"]["AgentVersion"][];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiAgentsIdVersionsNRestore: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                n: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Agent"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiAuthLogin: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    email: string;
                    password: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TokenPair"];
                };
            };
            401: components["responses"]["401"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiAuthRefresh: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    refresh_token: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TokenPair"];
                };
            };
            401: components["responses"]["401"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiAuthVerify: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        expires_at: string | null;
                        expires_in: number | null;
                        scopes: string | null;
                        /** @enum {string} */
                        token_type: "jwt" | "api_key";
                        /** Format: uuid */
                        user_id: string;
                        /** @constant */
                        valid: true;
                    };
                };
            };
            401: components["responses"]["401"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiChatInject: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    content: string;
                    /** Format: uuid */
                    conversation_id: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            409: components["responses"]["409"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiConnectors: {
        parameters: {
            query?: {
                page?: number;
                size?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: components["schemas"]["Connector"][];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiConnectors: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @default  */
                    description?: string;
                    /** @default {} */
                    headers?: unknown & {
                        [key: string]: string;
                    };
                    /** @default true */
                    is_active?: boolean;
                    /** @enum {string} */
                    kind: "mcp";
                    name: string;
                    /**
                     * @default streamable_http
                     * @enum {string}
                     */
                    transport?: "streamable_http" | "sse";
                    url: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Connector"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiConnectorsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Connector"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    deleteApiConnectorsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    patchApiConnectorsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    description?: string;
                    headers?: unknown & {
                        [key: string]: string | null;
                    };
                    is_active?: boolean;
                    /** @enum {string} */
                    kind?: "mcp";
                    name?: string;
                    /** @enum {string} */
                    transport?: "streamable_http" | "sse";
                    url?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Connector"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiConnectorsIdTest: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConnectorTestResult"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiConversations: {
        parameters: {
            query?: {
                agent_id?: string;
                page?: number;
                size?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: components["schemas"]["Conversation"][];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiConversationsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        agent_id: string | null;
                        /** Format: date-time */
                        created_at: string;
                        /** @description Older messages exist: GET /api/conversations/{id}/messages?before=<the first message id> */
                        has_more_messages: boolean;
                        /** Format: uuid */
                        id: string;
                        messages: components["schemas"]["Message"][];
                        /** @description At most 16 string pairs (keys up to 64 characters, values up to 512), as OpenAI's; {} when none */
                        metadata: {
                            [key: string]: string;
                        };
                        /** @description The conversation's oldest turns, summarised by its agent's model once the transcript outgrew 80% of the context window (DESIGN §20); null until then. The messages themselves are kept */
                        summary: string | null;
                        /** @description The last message the summary covers; later runs extend it from there */
                        summary_through: string | null;
                        title: string;
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    deleteApiConversationsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            409: components["responses"]["409"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    patchApiConversationsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    metadata?: ({
                        [key: string]: string;
                    } & unknown) | null;
                    title?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Conversation"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiConversationsIdMessages: {
        parameters: {
            query?: {
                before?: string;
                limit?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessagePage"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiDag: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    agent_id?: string | null;
                    client_tools?: {
                        description?: string;
                        name: string;
                        parameters?: unknown;
                    }[];
                    conversation_id?: string | null;
                    doc_mode?: ("auto" | "grounded" | "off") | null;
                    image_ids?: (string | string[]) | null;
                    multitask_strategy?: ("reject" | "enqueue" | "interrupt" | "rollback") | null;
                    output_schema?: unknown | null;
                    q: string;
                    token?: string | null;
                    user_metadata?: string | null;
                };
            };
        };
        responses: {
            /**
             * @description The run as server-sent events: each event is `id: <stream entry id>`, `event: <type>`, `data: <one-line JSON>`;
             *     `run` always comes first and `done` always last; a comment line `: ping` every 15 s. Headers `X-Run-Id` and `X-Conversation-Id` name the run.
             *     Resume after a dropped connection with `GET /api/runs/{id}/events` and `Last-Event-ID`.
             *
             *     | event | data |
             *     |---|---|
             *     | `run` | `{run_id, conversation_id, agent_id, mode, status: "queued"}` (always first) |
             *     | `status` | `{status: "running" \| "resumed" \| "waiting" \| "requires_action"}` |
             *     | `thought` | `{iteration, text}` |
             *     | `token` | `{iteration, text}` (incremental answer text) |
             *     | `tool_call` | `{iteration, call_id, name, arguments}` |
             *     | `client_tool_calls` | `{iteration, tool_calls: [{id, name, arguments}]}`: calls of the run's `client_tools` for the client to run (DESIGN §23), before `status: requires_action`; answer with POST /api/runs/{id}/tool-outputs |
             *     | `approval_required` | `{iteration, call_id, name, arguments}` (decide with POST /api/runs/{id}/approvals) |
             *     | `tool_result` | `{iteration, call_id, name, output, is_error}` |
             *     | `plan` | `{nodes: [{id, task, depends_on}]}` (DAG) |
             *     | `node` | `{node_id, status: "started" \| "succeeded" \| "failed", output?}` (DAG) |
             *     | `injected` | `{message_id, content, iteration}` |
             *     | `compaction` | `{summarized_messages, tokens_before, tokens_after}`: the oldest turns were folded into the conversation's `summary` to fit the agent's `context_window` (DESIGN §20) |
             *     | `memory` | `{ids, memories: [{id, namespace, content, score}]}`: the user's memories the run was given before its first model call, closest first (agents with `memory: true`, DESIGN §25; an empty list when none) |
             *     | `answer` | `{message_id, content, finish_reason: "stop" \| "length" \| "content_filter", citations: [{chunk_id, document_id, document_name, page}]}` |
             *     | `error` | `{code, message, retryable}` |
             *     | `done` | `{status: "succeeded" \| "failed" \| "cancelled", usage, duration_ms}` (always last) |
             */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The run's conversation */
                    "X-Conversation-Id": string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    /** @description The run being streamed */
                    "X-Run-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["RunEvent"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            409: components["responses"]["409"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiDatasets: {
        parameters: {
            query?: {
                page?: number;
                size?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            /** Format: date-time */
                            created_at: string;
                            description: string;
                            /** Format: uuid */
                            id: string;
                            item_count: number;
                            name: string;
                            /** Format: date-time */
                            updated_at: string;
                        }[];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiDatasets: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    description?: string;
                    name: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        description: string;
                        /** Format: uuid */
                        id: string;
                        item_count: number;
                        name: string;
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            409: components["responses"]["409"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiDatasetsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        description: string;
                        /** Format: uuid */
                        id: string;
                        item_count: number;
                        name: string;
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    deleteApiDatasetsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    patchApiDatasetsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    description?: string;
                    name?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        description: string;
                        /** Format: uuid */
                        id: string;
                        item_count: number;
                        name: string;
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiDatasetsIdItems: {
        parameters: {
            query?: {
                page?: number;
                size?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            /** Format: date-time */
                            created_at: string;
                            /** Format: uuid */
                            dataset_id: string;
                            expected: unknown | null;
                            /** Format: uuid */
                            id: string;
                            input: {
                                image_ids?: string[];
                                q: string;
                            };
                            metadata: {
                                [key: string]: unknown;
                            };
                            /** Format: date-time */
                            updated_at: string;
                        }[];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiDatasetsIdItems: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    expected?: unknown | null;
                    input: {
                        image_ids?: (string | string[]) | null;
                        q: string;
                    };
                    metadata?: {
                        [key: string]: unknown;
                    } | null;
                }[] | {
                    items: {
                        expected?: unknown | null;
                        input: {
                            image_ids?: (string | string[]) | null;
                            q: string;
                        };
                        metadata?: {
                            [key: string]: unknown;
                        } | null;
                    }[];
                };
                "multipart/form-data": {
                    file: string;
                    name?: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        added: number;
                        item_count: number;
                        items: {
                            /** Format: date-time */
                            created_at: string;
                            /** Format: uuid */
                            dataset_id: string;
                            expected: unknown | null;
                            /** Format: uuid */
                            id: string;
                            input: {
                                image_ids?: string[];
                                q: string;
                            };
                            metadata: {
                                [key: string]: unknown;
                            };
                            /** Format: date-time */
                            updated_at: string;
                        }[];
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            409: components["responses"]["409"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiDatasetsIdItemsItemId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                itemId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        /** Format: uuid */
                        dataset_id: string;
                        expected: unknown | null;
                        /** Format: uuid */
                        id: string;
                        input: {
                            image_ids?: string[];
                            q: string;
                        };
                        metadata: {
                            [key: string]: unknown;
                        };
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    deleteApiDatasetsIdItemsItemId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                itemId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    patchApiDatasetsIdItemsItemId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                itemId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    expected?: unknown | null;
                    input?: {
                        image_ids?: (string | string[]) | null;
                        q: string;
                    };
                    metadata?: {
                        [key: string]: unknown;
                    } | null;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        /** Format: uuid */
                        dataset_id: string;
                        expected: unknown | null;
                        /** Format: uuid */
                        id: string;
                        input: {
                            image_ids?: string[];
                            q: string;
                        };
                        metadata: {
                            [key: string]: unknown;
                        };
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiEvals: {
        parameters: {
            query?: {
                agent_id?: string;
                dataset_id?: string;
                page?: number;
                size?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            /** Format: uuid */
                            agent_id: string;
                            agent_version: number;
                            concurrency: number;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: uuid */
                            dataset_id: string;
                            error: {
                                code: string;
                                message: string;
                            } | null;
                            finished_at: string | null;
                            /** Format: uuid */
                            id: string;
                            /** @enum {string} */
                            mode: "react" | "dag";
                            pass_rate: number | null;
                            /** @description Items finished (scored, or failed to run) of all; `failed` of them could not be run or their run failed */
                            progress: {
                                done: number;
                                failed: number;
                                total: number;
                            };
                            scorers: ({
                                ignore_case?: boolean;
                                name?: string;
                                threshold?: number;
                                /** @constant */
                                type: "exact";
                            } | {
                                ignore_case?: boolean;
                                name?: string;
                                threshold?: number;
                                /** @constant */
                                type: "contains";
                            } | {
                                flags?: string;
                                name?: string;
                                pattern?: string;
                                threshold?: number;
                                /** @constant */
                                type: "regex";
                            } | {
                                name?: string;
                                relative?: boolean;
                                threshold?: number;
                                tolerance?: number;
                                /** @constant */
                                type: "numeric";
                            } | {
                                name?: string;
                                schema: unknown | null;
                                threshold?: number;
                                /** @constant */
                                type: "json_schema";
                            } | {
                                min?: number;
                                name?: string;
                                threshold?: number;
                                /** @constant */
                                type: "cites";
                            } | {
                                model: string;
                                name?: string;
                                rubric: string;
                                threshold?: number;
                                /** @constant */
                                type: "llm_judge";
                            })[];
                            started_at: string | null;
                            /** @enum {string} */
                            status: "queued" | "running" | "succeeded" | "failed" | "cancelled";
                            /** @description Each scorer's mean score (0..1) over the items done; null before any */
                            summary: {
                                [key: string]: number | null;
                            };
                        }[];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiEvals: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** Format: uuid */
                    agent_id: string;
                    agent_version?: number;
                    /** @default 4 */
                    concurrency?: number;
                    /** Format: uuid */
                    dataset_id: string;
                    /**
                     * @default react
                     * @enum {string}
                     */
                    mode?: "react" | "dag";
                    scorers: ({
                        ignore_case?: boolean;
                        name?: string;
                        threshold?: number;
                        /** @constant */
                        type: "exact";
                    } | {
                        ignore_case?: boolean;
                        name?: string;
                        threshold?: number;
                        /** @constant */
                        type: "contains";
                    } | {
                        flags?: string;
                        name?: string;
                        pattern?: string;
                        threshold?: number;
                        /** @constant */
                        type: "regex";
                    } | {
                        name?: string;
                        relative?: boolean;
                        threshold?: number;
                        tolerance?: number;
                        /** @constant */
                        type: "numeric";
                    } | {
                        name?: string;
                        schema: unknown | null;
                        threshold?: number;
                        /** @constant */
                        type: "json_schema";
                    } | {
                        min?: number;
                        name?: string;
                        threshold?: number;
                        /** @constant */
                        type: "cites";
                    } | {
                        model: string;
                        name?: string;
                        rubric: string;
                        threshold?: number;
                        /** @constant */
                        type: "llm_judge";
                    })[];
                };
            };
        };
        responses: {
            /** @description Accepted */
            202: {
                headers: {
                    /** @description The eval: GET it for its progress and summary */
                    Location: string;
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        agent_id: string;
                        agent_version: number;
                        concurrency: number;
                        /** Format: date-time */
                        created_at: string;
                        /** Format: uuid */
                        dataset_id: string;
                        error: {
                            code: string;
                            message: string;
                        } | null;
                        finished_at: string | null;
                        /** Format: uuid */
                        id: string;
                        /** @enum {string} */
                        mode: "react" | "dag";
                        pass_rate: number | null;
                        /** @description Items finished (scored, or failed to run) of all; `failed` of them could not be run or their run failed */
                        progress: {
                            done: number;
                            failed: number;
                            total: number;
                        };
                        scorers: ({
                            ignore_case?: boolean;
                            name?: string;
                            threshold?: number;
                            /** @constant */
                            type: "exact";
                        } | {
                            ignore_case?: boolean;
                            name?: string;
                            threshold?: number;
                            /** @constant */
                            type: "contains";
                        } | {
                            flags?: string;
                            name?: string;
                            pattern?: string;
                            threshold?: number;
                            /** @constant */
                            type: "regex";
                        } | {
                            name?: string;
                            relative?: boolean;
                            threshold?: number;
                            tolerance?: number;
                            /** @constant */
                            type: "numeric";
                        } | {
                            name?: string;
                            schema: unknown | null;
                            threshold?: number;
                            /** @constant */
                            type: "json_schema";
                        } | {
                            min?: number;
                            name?: string;
                            threshold?: number;
                            /** @constant */
                            type: "cites";
                        } | {
                            model: string;
                            name?: string;
                            rubric: string;
                            threshold?: number;
                            /** @constant */
                            type: "llm_judge";
                        })[];
                        started_at: string | null;
                        /** @enum {string} */
                        status: "queued" | "running" | "succeeded" | "failed" | "cancelled";
                        /** @description Each scorer's mean score (0..1) over the items done; null before any */
                        summary: {
                            [key: string]: number | null;
                        };
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiEvalsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        agent_id: string;
                        agent_version: number;
                        concurrency: number;
                        /** Format: date-time */
                        created_at: string;
                        /** Format: uuid */
                        dataset_id: string;
                        error: {
                            code: string;
                            message: string;
                        } | null;
                        finished_at: string | null;
                        /** Format: uuid */
                        id: string;
                        /** @enum {string} */
                        mode: "react" | "dag";
                        pass_rate: number | null;
                        /** @description Items finished (scored, or failed to run) of all; `failed` of them could not be run or their run failed */
                        progress: {
                            done: number;
                            failed: number;
                            total: number;
                        };
                        scorers: ({
                            ignore_case?: boolean;
                            name?: string;
                            threshold?: number;
                            /** @constant */
                            type: "exact";
                        } | {
                            ignore_case?: boolean;
                            name?: string;
                            threshold?: number;
                            /** @constant */
                            type: "contains";
                        } | {
                            flags?: string;
                            name?: string;
                            pattern?: string;
                            threshold?: number;
                            /** @constant */
                            type: "regex";
                        } | {
                            name?: string;
                            relative?: boolean;
                            threshold?: number;
                            tolerance?: number;
                            /** @constant */
                            type: "numeric";
                        } | {
                            name?: string;
                            schema: unknown | null;
                            threshold?: number;
                            /** @constant */
                            type: "json_schema";
                        } | {
                            min?: number;
                            name?: string;
                            threshold?: number;
                            /** @constant */
                            type: "cites";
                        } | {
                            model: string;
                            name?: string;
                            rubric: string;
                            threshold?: number;
                            /** @constant */
                            type: "llm_judge";
                        })[];
                        started_at: string | null;
                        /** @enum {string} */
                        status: "queued" | "running" | "succeeded" | "failed" | "cancelled";
                        /** @description Each scorer's mean score (0..1) over the items done; null before any */
                        summary: {
                            [key: string]: number | null;
                        };
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiEvalsIdCancel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Accepted */
            202: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        agent_id: string;
                        agent_version: number;
                        concurrency: number;
                        /** Format: date-time */
                        created_at: string;
                        /** Format: uuid */
                        dataset_id: string;
                        error: {
                            code: string;
                            message: string;
                        } | null;
                        finished_at: string | null;
                        /** Format: uuid */
                        id: string;
                        /** @enum {string} */
                        mode: "react" | "dag";
                        pass_rate: number | null;
                        /** @description Items finished (scored, or failed to run) of all; `failed` of them could not be run or their run failed */
                        progress: {
                            done: number;
                            failed: number;
                            total: number;
                        };
                        scorers: ({
                            ignore_case?: boolean;
                            name?: string;
                            threshold?: number;
                            /** @constant */
                            type: "exact";
                        } | {
                            ignore_case?: boolean;
                            name?: string;
                            threshold?: number;
                            /** @constant */
                            type: "contains";
                        } | {
                            flags?: string;
                            name?: string;
                            pattern?: string;
                            threshold?: number;
                            /** @constant */
                            type: "regex";
                        } | {
                            name?: string;
                            relative?: boolean;
                            threshold?: number;
                            tolerance?: number;
                            /** @constant */
                            type: "numeric";
                        } | {
                            name?: string;
                            schema: unknown | null;
                            threshold?: number;
                            /** @constant */
                            type: "json_schema";
                        } | {
                            min?: number;
                            name?: string;
                            threshold?: number;
                            /** @constant */
                            type: "cites";
                        } | {
                            model: string;
                            name?: string;
                            rubric: string;
                            threshold?: number;
                            /** @constant */
                            type: "llm_judge";
                        })[];
                        started_at: string | null;
                        /** @enum {string} */
                        status: "queued" | "running" | "succeeded" | "failed" | "cancelled";
                        /** @description Each scorer's mean score (0..1) over the items done; null before any */
                        summary: {
                            [key: string]: number | null;
                        };
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            409: components["responses"]["409"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiEvalsIdResults: {
        parameters: {
            query?: {
                page?: number;
                size?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            error: {
                                code: string;
                                message: string;
                            } | null;
                            expected: unknown | null;
                            input: {
                                image_ids?: string[];
                                q: string;
                            };
                            /** Format: uuid */
                            item_id: string;
                            output: string | null;
                            passed: boolean | null;
                            run_id: string | null;
                            scores: {
                                [key: string]: number;
                            } | null;
                            /** @enum {string} */
                            status: "pending" | "running" | "scored" | "failed" | "cancelled";
                        }[];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiEvalsCompare: {
        parameters: {
            query: {
                a: string;
                b: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        a: {
                            /** Format: uuid */
                            agent_id: string;
                            agent_version: number;
                            /** Format: uuid */
                            id: string;
                            /** @enum {string} */
                            status: "queued" | "running" | "succeeded" | "failed" | "cancelled";
                            summary: {
                                [key: string]: number | null;
                            };
                        };
                        b: {
                            /** Format: uuid */
                            agent_id: string;
                            agent_version: number;
                            /** Format: uuid */
                            id: string;
                            /** @enum {string} */
                            status: "queued" | "running" | "succeeded" | "failed" | "cancelled";
                            summary: {
                                [key: string]: number | null;
                            };
                        };
                        /** Format: uuid */
                        dataset_id: string;
                        items: {
                            compared: number;
                            losses: number;
                            ties: number;
                            wins: number;
                        };
                        scorers: {
                            [key: string]: {
                                a: number | null;
                                b: number | null;
                                losses: number;
                                ties: number;
                                wins: number;
                            };
                        };
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiFiles: {
        parameters: {
            query?: {
                page?: number;
                size?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: components["schemas"]["File"][];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiFiles: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "multipart/form-data": {
                    file: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["File"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            413: components["responses"]["413"];
            415: components["responses"]["415"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiFilesId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["File"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    deleteApiFilesId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiFilesIdContent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The image as uploaded */
            200: {
                headers: {
                    /** @description attachment, with the file name */
                    "Content-Disposition": string;
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "image/*": unknown;
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiKnowledgeBases: {
        parameters: {
            query?: {
                page?: number;
                size?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: components["schemas"]["KnowledgeBase"][];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiKnowledgeBases: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @default 200 */
                    chunk_overlap?: number;
                    /** @default 1000 */
                    chunk_size?: number;
                    /**
                     * @default recursive
                     * @enum {string}
                     */
                    chunk_strategy?: "fixed" | "sentence" | "paragraph" | "recursive";
                    /** @default  */
                    description?: string;
                    embedding_dimensions?: number;
                    embedding_model?: string;
                    name: string;
                    rerank_model?: string | null;
                    /**
                     * @default hybrid
                     * @enum {string}
                     */
                    retrieval_mode?: "keyword" | "semantic" | "hybrid";
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["KnowledgeBase"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiKnowledgeBasesId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["KnowledgeBase"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    deleteApiKnowledgeBasesId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    patchApiKnowledgeBasesId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    chunk_overlap?: number;
                    chunk_size?: number;
                    /** @enum {string} */
                    chunk_strategy?: "fixed" | "sentence" | "paragraph" | "recursive";
                    description?: string;
                    embedding_dimensions?: number;
                    embedding_model?: string;
                    is_active?: boolean;
                    name?: string;
                    rerank_model?: string | null;
                    /** @enum {string} */
                    retrieval_mode?: "keyword" | "semantic" | "hybrid";
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["KnowledgeBase"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiKnowledgeBasesIdDocuments: {
        parameters: {
            query?: {
                page?: number;
                size?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: components["schemas"]["Document"][];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiKnowledgeBasesIdDocuments: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    content: string;
                    name: string;
                };
                "multipart/form-data": {
                    file: string;
                    name?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Document"];
                };
            };
            /** @description Accepted */
            202: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Document"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            415: components["responses"]["415"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiKnowledgeBasesIdDocumentsDocumentId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                documentId: string;
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Document"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    deleteApiKnowledgeBasesIdDocumentsDocumentId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                documentId: string;
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiKnowledgeBasesIdRetrieve: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    query: string;
                    /** @enum {string} */
                    retrieval_mode?: "keyword" | "semantic" | "hybrid";
                    score_threshold?: number;
                    /** @default 5 */
                    top_k?: number;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RetrieveResult"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            502: components["responses"]["502"];
            503: components["responses"]["503"];
        };
    };
    getApiMeApiKeys: {
        parameters: {
            query?: {
                page?: number;
                size?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: components["schemas"]["UserApiKeyInfo"][];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiMeApiKeys: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    expires_at?: string | null;
                    name: string;
                    rate_limit_rpm?: number | null;
                    scopes?: string | null;
                    token_budget?: {
                        limit: number;
                        /** @enum {string} */
                        period: "day" | "month";
                    } | null;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        expires_at: string | null;
                        /** Format: uuid */
                        id: string;
                        is_active: boolean;
                        /** @description The full key (svc_…), shown in this response only */
                        key: string;
                        key_prefix: string;
                        last_used_at: string | null;
                        name: string;
                        /** @description Requests per minute; null: none of its own */
                        rate_limit_rpm: number | null;
                        /** @description Space-separated scopes (chat, kb, agents, connectors, admin); null: full access */
                        scopes: string | null;
                        /** @description Model tokens per UTC calendar day or month; null: none of its own */
                        token_budget: {
                            limit: number;
                            /** @enum {string} */
                            period: "day" | "month";
                        } | null;
                        /** @description The budget's current period: tokens used so far, when it began and when it resets; null without a budget */
                        token_usage: {
                            /** Format: date-time */
                            period_start: string;
                            /** Format: date-time */
                            resets_at: string;
                            used: number;
                        } | null;
                        total_requests: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    deleteApiMeApiKeysId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    patchApiMeApiKeysId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    expires_at?: string | null;
                    is_active?: boolean;
                    name?: string;
                    rate_limit_rpm?: number | null;
                    token_budget?: {
                        limit: number;
                        /** @enum {string} */
                        period: "day" | "month";
                    } | null;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserApiKeyInfo"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiMemories: {
        parameters: {
            query?: {
                namespace?: string;
                page?: number;
                q?: string;
                size?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            content: string;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: uuid */
                            id: string;
                            metadata: {
                                [key: string]: unknown;
                            };
                            /** @description "user" (all of the user's agents read it) or the id of the agent that remembers it */
                            namespace: string;
                            /** @description With q: how close the memory is to q in meaning (cosine similarity; higher is closer) */
                            score?: number;
                            /** Format: date-time */
                            updated_at: string;
                        }[];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            502: components["responses"]["502"];
            503: components["responses"]["503"];
        };
    };
    postApiMemories: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    content: string;
                    metadata?: unknown | null;
                    namespace: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        content: string;
                        /** Format: date-time */
                        created_at: string;
                        /** Format: uuid */
                        id: string;
                        metadata: {
                            [key: string]: unknown;
                        };
                        /** @description "user" (all of the user's agents read it) or the id of the agent that remembers it */
                        namespace: string;
                        /** @description With q: how close the memory is to q in meaning (cosine similarity; higher is closer) */
                        score?: number;
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            409: components["responses"]["409"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            502: components["responses"]["502"];
            503: components["responses"]["503"];
        };
    };
    deleteApiMemories: {
        parameters: {
            query: {
                namespace: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        deleted: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiMemoriesId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        content: string;
                        /** Format: date-time */
                        created_at: string;
                        /** Format: uuid */
                        id: string;
                        metadata: {
                            [key: string]: unknown;
                        };
                        /** @description "user" (all of the user's agents read it) or the id of the agent that remembers it */
                        namespace: string;
                        /** @description With q: how close the memory is to q in meaning (cosine similarity; higher is closer) */
                        score?: number;
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    deleteApiMemoriesId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    patchApiMemoriesId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    content?: string;
                    metadata?: unknown | null;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        content: string;
                        /** Format: date-time */
                        created_at: string;
                        /** Format: uuid */
                        id: string;
                        metadata: {
                            [key: string]: unknown;
                        };
                        /** @description "user" (all of the user's agents read it) or the id of the agent that remembers it */
                        namespace: string;
                        /** @description With q: how close the memory is to q in meaning (cosine similarity; higher is closer) */
                        score?: number;
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            502: components["responses"]["502"];
            503: components["responses"]["503"];
        };
    };
    getApiMemoryNamespaces: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: {
                            agent_id: string | null;
                            /** @description The agent whose namespace it is; null for "user", and for an agent deleted since */
                            agent_name: string | null;
                            count: number;
                            namespace: string;
                        }[];
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiReact: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    agent_id?: string | null;
                    client_tools?: {
                        description?: string;
                        name: string;
                        parameters?: unknown;
                    }[];
                    conversation_id?: string | null;
                    doc_mode?: ("auto" | "grounded" | "off") | null;
                    image_ids?: (string | string[]) | null;
                    multitask_strategy?: ("reject" | "enqueue" | "interrupt" | "rollback") | null;
                    output_schema?: unknown | null;
                    q: string;
                    token?: string | null;
                    user_metadata?: string | null;
                };
            };
        };
        responses: {
            /**
             * @description The run as server-sent events: each event is `id: <stream entry id>`, `event: <type>`, `data: <one-line JSON>`;
             *     `run` always comes first and `done` always last; a comment line `: ping` every 15 s. Headers `X-Run-Id` and `X-Conversation-Id` name the run.
             *     Resume after a dropped connection with `GET /api/runs/{id}/events` and `Last-Event-ID`.
             *
             *     | event | data |
             *     |---|---|
             *     | `run` | `{run_id, conversation_id, agent_id, mode, status: "queued"}` (always first) |
             *     | `status` | `{status: "running" \| "resumed" \| "waiting" \| "requires_action"}` |
             *     | `thought` | `{iteration, text}` |
             *     | `token` | `{iteration, text}` (incremental answer text) |
             *     | `tool_call` | `{iteration, call_id, name, arguments}` |
             *     | `client_tool_calls` | `{iteration, tool_calls: [{id, name, arguments}]}`: calls of the run's `client_tools` for the client to run (DESIGN §23), before `status: requires_action`; answer with POST /api/runs/{id}/tool-outputs |
             *     | `approval_required` | `{iteration, call_id, name, arguments}` (decide with POST /api/runs/{id}/approvals) |
             *     | `tool_result` | `{iteration, call_id, name, output, is_error}` |
             *     | `plan` | `{nodes: [{id, task, depends_on}]}` (DAG) |
             *     | `node` | `{node_id, status: "started" \| "succeeded" \| "failed", output?}` (DAG) |
             *     | `injected` | `{message_id, content, iteration}` |
             *     | `compaction` | `{summarized_messages, tokens_before, tokens_after}`: the oldest turns were folded into the conversation's `summary` to fit the agent's `context_window` (DESIGN §20) |
             *     | `memory` | `{ids, memories: [{id, namespace, content, score}]}`: the user's memories the run was given before its first model call, closest first (agents with `memory: true`, DESIGN §25; an empty list when none) |
             *     | `answer` | `{message_id, content, finish_reason: "stop" \| "length" \| "content_filter", citations: [{chunk_id, document_id, document_name, page}]}` |
             *     | `error` | `{code, message, retryable}` |
             *     | `done` | `{status: "succeeded" \| "failed" \| "cancelled", usage, duration_ms}` (always last) |
             */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The run's conversation */
                    "X-Conversation-Id": string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    /** @description The run being streamed */
                    "X-Run-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["RunEvent"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            409: components["responses"]["409"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiRuns: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    agent_id?: string | null;
                    client_tools?: {
                        description?: string;
                        name: string;
                        parameters?: unknown;
                    }[];
                    conversation_id?: string | null;
                    doc_mode?: ("auto" | "grounded" | "off") | null;
                    image_ids?: (string | string[]) | null;
                    /** @enum {string} */
                    mode: "react" | "dag";
                    multitask_strategy?: ("reject" | "enqueue" | "interrupt" | "rollback") | null;
                    output_schema?: unknown | null;
                    q: string;
                    user_metadata?: string | null;
                };
            };
        };
        responses: {
            /** @description Accepted */
            202: {
                headers: {
                    /** @description The run: GET it (with ?wait=N) to follow it */
                    Location: string;
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        conversation_id: string;
                        /** Format: uuid */
                        run_id: string;
                        /** @constant */
                        status: "queued";
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            409: components["responses"]["409"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiRunsId: {
        parameters: {
            query?: {
                wait?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Run"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiRunsIdApprovals: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    call_id: string;
                    /** @enum {string} */
                    decision: "approve" | "reject";
                    message?: string;
                };
            };
        };
        responses: {
            /** @description Accepted */
            202: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        call_id: string;
                        /** @enum {string} */
                        decision: "approve" | "reject";
                        /** Format: uuid */
                        run_id: string;
                        /** @enum {string} */
                        status: "recorded" | "resuming";
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            409: components["responses"]["409"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiRunsIdCancel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Accepted */
            202: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        run_id: string;
                        /** @constant */
                        status: "cancelling";
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            409: components["responses"]["409"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiRunsIdEvents: {
        parameters: {
            query?: {
                after?: string;
            };
            header?: {
                "last-event-id"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /**
             * @description The run as server-sent events: each event is `id: <stream entry id>`, `event: <type>`, `data: <one-line JSON>`;
             *     `run` always comes first and `done` always last; a comment line `: ping` every 15 s. Headers `X-Run-Id` and `X-Conversation-Id` name the run.
             *     Resume after a dropped connection with `GET /api/runs/{id}/events` and `Last-Event-ID`.
             *
             *     | event | data |
             *     |---|---|
             *     | `run` | `{run_id, conversation_id, agent_id, mode, status: "queued"}` (always first) |
             *     | `status` | `{status: "running" \| "resumed" \| "waiting" \| "requires_action"}` |
             *     | `thought` | `{iteration, text}` |
             *     | `token` | `{iteration, text}` (incremental answer text) |
             *     | `tool_call` | `{iteration, call_id, name, arguments}` |
             *     | `client_tool_calls` | `{iteration, tool_calls: [{id, name, arguments}]}`: calls of the run's `client_tools` for the client to run (DESIGN §23), before `status: requires_action`; answer with POST /api/runs/{id}/tool-outputs |
             *     | `approval_required` | `{iteration, call_id, name, arguments}` (decide with POST /api/runs/{id}/approvals) |
             *     | `tool_result` | `{iteration, call_id, name, output, is_error}` |
             *     | `plan` | `{nodes: [{id, task, depends_on}]}` (DAG) |
             *     | `node` | `{node_id, status: "started" \| "succeeded" \| "failed", output?}` (DAG) |
             *     | `injected` | `{message_id, content, iteration}` |
             *     | `compaction` | `{summarized_messages, tokens_before, tokens_after}`: the oldest turns were folded into the conversation's `summary` to fit the agent's `context_window` (DESIGN §20) |
             *     | `memory` | `{ids, memories: [{id, namespace, content, score}]}`: the user's memories the run was given before its first model call, closest first (agents with `memory: true`, DESIGN §25; an empty list when none) |
             *     | `answer` | `{message_id, content, finish_reason: "stop" \| "length" \| "content_filter", citations: [{chunk_id, document_id, document_name, page}]}` |
             *     | `error` | `{code, message, retryable}` |
             *     | `done` | `{status: "succeeded" \| "failed" \| "cancelled", usage, duration_ms}` (always last) |
             */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The run's conversation */
                    "X-Conversation-Id": string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    /** @description The run being streamed */
                    "X-Run-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["RunEvent"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            410: components["responses"]["410"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiRunsIdToolOutputs: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    tool_outputs: {
                        call_id: string;
                        output: string;
                    }[];
                };
            };
        };
        responses: {
            /** @description Accepted */
            202: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        run_id: string;
                        /** @enum {string} */
                        status: "recorded" | "resuming";
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            409: components["responses"]["409"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiSchedules: {
        parameters: {
            query?: {
                page?: number;
                size?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: components["schemas"]["Schedule"][];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiSchedules: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @default null */
                    agent_id?: string | null;
                    /** @default null */
                    conversation_id?: string | null;
                    /** @default null */
                    cron?: string | null;
                    /** @default true */
                    enabled?: boolean;
                    /** @default null */
                    every_seconds?: number | null;
                    /**
                     * @default react
                     * @enum {string}
                     */
                    mode?: "react" | "dag";
                    name?: string;
                    q: string;
                    /** @default UTC */
                    timezone?: string;
                    /** @default null */
                    user_metadata?: string | null;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Schedule"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            409: components["responses"]["409"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiSchedulesId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Schedule"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    deleteApiSchedulesId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    patchApiSchedulesId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    agent_id?: string | null;
                    conversation_id?: string | null;
                    cron?: string | null;
                    enabled?: boolean;
                    every_seconds?: number | null;
                    /** @enum {string} */
                    mode?: "react" | "dag";
                    name?: string;
                    q?: string;
                    timezone?: string;
                    user_metadata?: string | null;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Schedule"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiSchedulesIdRuns: {
        parameters: {
            query?: {
                page?: number;
                size?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: components["schemas"]["Run"][];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiSchedulesIdTrigger: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Accepted */
            202: {
                headers: {
                    /** @description The run: GET it (with ?wait=N) to follow it */
                    Location: string;
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        conversation_id: string;
                        /** Format: uuid */
                        run_id: string;
                        /** @constant */
                        status: "queued";
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            409: components["responses"]["409"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiWebhooks: {
        parameters: {
            query?: {
                page?: number;
                size?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: components["schemas"]["Webhook"][];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiWebhooks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @default  */
                    description?: string;
                    events: ("run.succeeded" | "run.failed" | "run.cancelled" | "run.interrupted" | "run.waiting" | "run.requires_action" | "eval.succeeded" | "eval.failed")[];
                    /** @default true */
                    is_active?: boolean;
                    url: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        consecutive_failures: number;
                        /** Format: date-time */
                        created_at: string;
                        description: string;
                        disabled_reason: string | null;
                        events: ("run.succeeded" | "run.failed" | "run.cancelled" | "run.interrupted" | "run.waiting" | "run.requires_action" | "eval.succeeded" | "eval.failed")[];
                        /** Format: uuid */
                        id: string;
                        is_active: boolean;
                        /** @description The signing secret (whsec_…), shown in this response only */
                        secret: string;
                        /** Format: date-time */
                        updated_at: string;
                        url: string;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiWebhooksId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    deleteApiWebhooksId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No content */
            204: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    patchApiWebhooksId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    description?: string;
                    events?: ("run.succeeded" | "run.failed" | "run.cancelled" | "run.interrupted" | "run.waiting" | "run.requires_action" | "eval.succeeded" | "eval.failed")[];
                    is_active?: boolean;
                    url?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getApiWebhooksIdDeliveries: {
        parameters: {
            query?: {
                page?: number;
                size?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: components["schemas"]["WebhookDelivery"][];
                        page: number;
                        pages: number;
                        size: number;
                        total: number;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiWebhooksIdDeliveriesDeliveryIdRedeliver: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                deliveryId: string;
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Accepted */
            202: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDelivery"];
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            409: components["responses"]["409"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postApiWebhooksIdRotateSecret: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        consecutive_failures: number;
                        /** Format: date-time */
                        created_at: string;
                        description: string;
                        disabled_reason: string | null;
                        events: ("run.succeeded" | "run.failed" | "run.cancelled" | "run.interrupted" | "run.waiting" | "run.requires_action" | "eval.succeeded" | "eval.failed")[];
                        /** Format: uuid */
                        id: string;
                        is_active: boolean;
                        /** @description The signing secret (whsec_…), shown in this response only */
                        secret: string;
                        /** Format: date-time */
                        updated_at: string;
                        url: string;
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            404: components["responses"]["404"];
            413: components["responses"]["413"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getConsole: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The console page */
            200: {
                headers: {
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getConsoleAssetsFile: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                file: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A script (text/javascript) or style (text/css) of the console */
            200: {
                headers: {
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "text/*": unknown;
                };
            };
            404: components["responses"]["404"];
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getDocs: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The documentation page */
            200: {
                headers: {
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    "getDocsInit.js": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description init.js */
            200: {
                headers: {
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "text/javascript": unknown;
                };
            };
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    "getDocsSwaggerUiBundle.js": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description swagger-ui-bundle.js */
            200: {
                headers: {
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "text/javascript": unknown;
                };
            };
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    "getDocsSwaggerUi.css": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description swagger-ui.css */
            200: {
                headers: {
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "text/css": unknown;
                };
            };
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getHealthz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "ok";
                    };
                };
            };
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    postMcp: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The JSON-RPC answer to the request(s) of the body, as server-sent events `event: message` with one JSON-RPC message each: `notifications/progress` while an agent runs (when the call carries `_meta.progressToken`), then the result. Send `Accept: application/json, text/event-stream` and `Content-Type: application/json`. */
            200: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": {
                        data: {
                            /** @constant */
                            jsonrpc: "2.0";
                        };
                        /** @constant */
                        event: "message";
                        id: string;
                    };
                };
            };
            /** @description Accepted */
            202: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request */
            400: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            code: number;
                            message: string;
                        };
                        id: (string | number) | null;
                        /** @constant */
                        jsonrpc: "2.0";
                    };
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            /** @description Success */
            406: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            code: number;
                            message: string;
                        };
                        id: (string | number) | null;
                        /** @constant */
                        jsonrpc: "2.0";
                    };
                };
            };
            413: components["responses"]["413"];
            /** @description Unsupported media type */
            415: {
                headers: {
                    /** @description What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>` */
                    RateLimit?: string;
                    /** @description The credential's rate limit: `"rpm";q=<requests>;w=60` */
                    "RateLimit-Policy"?: string;
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            code: number;
                            message: string;
                        };
                        id: (string | number) | null;
                        /** @constant */
                        jsonrpc: "2.0";
                    };
                };
            };
            422: components["responses"]["422"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Prometheus text exposition format */
            200: {
                headers: {
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": unknown;
                };
            };
            401: components["responses"]["401"];
            403: components["responses"]["403"];
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    "getOpenapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        info: {
                            title: string;
                            version: string;
                        };
                        /** @constant */
                        openapi: "3.1.0";
                        paths: {
                            [key: string]: unknown;
                        };
                    };
                };
            };
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
    getReadyz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id (kept from the request when sane), in every log line of the request */
                    "X-Request-Id": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        checks: {
                            /** @constant */
                            postgres: "ok";
                            /** @constant */
                            redis: "ok";
                        };
                        /** @constant */
                        status: "ready";
                    };
                };
            };
            429: components["responses"]["429"];
            500: components["responses"]["500"];
            503: components["responses"]["503"];
        };
    };
}
