;;; lsp-mode-edit.el --- Emacs + lsp-mode (Debian elpa-lsp-mode 8.0): an edit in the unsaved buffer  -*- lexical-binding: t -*-
;; Loaded after cadenza-test.el (its waits, answers and result file; eglot stays unused).
;; Script: edit_file a.py "alpha" -> "beta", create_file made.py, then a final text.

(require 'lsp-mode)
(setq lsp-auto-guess-root t
      lsp-enable-file-watchers nil
      lsp-restart 'ignore
      lsp-keep-workspace-alive nil
      lsp-session-file (expand-file-name "lsp-session" temporary-file-directory))

(defvar cadenza-test-lsp-updates nil "Session updates (hash tables), oldest first.")

(lsp-register-client
 (make-lsp-client
  :new-connection (lsp-stdio-connection '("cadenza" "serve" "--log-level" "WARNING"))
  :major-modes '(python-mode)
  :server-id 'cadenza
  :priority 10
  :notification-handlers
  (ht ("cadenza/sessionUpdate"
       (lambda (_workspace params)
         (setq cadenza-test-lsp-updates
               (append cadenza-test-lsp-updates (list (gethash "update" params)))))))))

(defun cadenza-test-lsp-end ()
  "The `session_end' update, once it came."
  (cl-find "session_end" cadenza-test-lsp-updates
           :key (lambda (u) (gethash "sessionUpdate" u)) :test #'equal))

(condition-case err
    (let ((path (expand-file-name "a.py" cadenza-test-ws)))
      (with-temp-file path (insert "name = 'alpha'\n"))
      (find-file path)
      (lsp-workspace-folders-add cadenza-test-ws)
      (lsp)
      (cadenza-test-wait-for "lsp-mode to connect"
                             (lambda () (and (lsp-workspaces)
                                             (eq (lsp--workspace-status (car (lsp-workspaces)))
                                                 'initialized))))
      (let ((result (lsp-request "workspace/executeCommand"
                                 (list :command "cadenza.startSession"
                                       :arguments (vector (list :task "rename alpha"
                                                                :model "openai/test"))))))
        (cadenza-test-note 'session (gethash "sessionId" result)))
      (cadenza-test-wait-for "the session to end" #'cadenza-test-lsp-end)
      (cadenza-test-note 'stop (gethash "stopReason" (cadenza-test-lsp-end)))
      (cadenza-test-note 'buffer (buffer-string))
      (cadenza-test-note 'modified (if (buffer-modified-p) t :json-false))
      (cadenza-test-note 'made_buffer (let ((b (get-file-buffer (expand-file-name "made.py" cadenza-test-ws))))
                                        (if b (with-current-buffer b (buffer-string)) :null)))
      (cadenza-test-note 'statuses
                         (vconcat (cl-loop for u in cadenza-test-lsp-updates
                                           when (member (gethash "status" u) '("completed" "failed"))
                                           collect (gethash "status" u))))
      (cadenza-test-note 'kinds (vconcat (mapcar (lambda (u) (gethash "sessionUpdate" u))
                                                 cadenza-test-lsp-updates)))
      (with-temp-file (getenv "CADENZA_TEST_RESULT")
        (insert (json-encode cadenza-test-findings)))
      (ignore-errors (lsp-workspace-shutdown (car (lsp-workspaces))))
      (kill-emacs 0))
  (error
   (princ (format "scenario failed: %S\n" err) #'external-debugging-output)
   (kill-emacs 1)))
