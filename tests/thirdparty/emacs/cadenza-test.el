;;; cadenza-test.el --- shared setup of the Emacs + eglot scenarios  -*- lexical-binding: t -*-

;; Loaded before each scenario by tests/thirdparty/test_eglot.py, in `emacs --batch -Q'.
;; Environment: CADENZA_TEST_WS (the workspace), CADENZA_TEST_RESULT (where the scenario's
;; findings go, as JSON), CADENZA_TEST_ANSWERS (titles chosen, in order, for the server's
;; `window/showMessageRequest', separated by `|'). eglot runs as a person would have it set
;; up, except for what batch mode cannot do: `y-or-n-p' and `completing-read' read no
;; terminal, so they are answered here (and recorded).

(require 'package)
;; Debian's elpa-* packages live here; -Q skips the site start-up that adds it.
(add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa")
(package-initialize)
(require 'eglot)
(require 'json)
(require 'cl-lib)

(defvar cadenza-test-ws (file-name-as-directory (getenv "CADENZA_TEST_WS")))
(defvar cadenza-test-wait 40 "Seconds any one wait may take.")
(defvar cadenza-test-updates nil "The `cadenza/sessionUpdate' params (plists), oldest first.")
(defvar cadenza-test-questions nil "The `window/showMessageRequest' prompts, oldest first.")
(defvar cadenza-test-answers
  (let ((raw (getenv "CADENZA_TEST_ANSWERS")))
    (and raw (not (string-empty-p raw)) (split-string raw "|"))))
(defvar cadenza-test-findings nil "An alist written as the result JSON.")

(setq eglot-confirm-server-initiated-edits nil
      eglot-sync-connect cadenza-test-wait
      eglot-connect-timeout cadenza-test-wait
      eglot-autoshutdown nil
      make-backup-files nil
      create-lockfiles nil)
(fset 'y-or-n-p (lambda (&rest _) t))
(fset 'yes-or-no-p (lambda (&rest _) t))
(add-to-list 'eglot-server-programs
             '(python-mode . ("cadenza" "serve" "--log-level" "WARNING")))

(advice-add 'completing-read :override
            (lambda (prompt collection &rest _)
              "eglot's `window/showMessageRequest' handler asks through this."
              (setq cadenza-test-questions
                    (append cadenza-test-questions
                            (list (list :prompt (substring-no-properties prompt)
                                        :choices (vconcat collection)))))
              (or (pop cadenza-test-answers) (car collection))))

(cl-defmethod eglot-handle-notification
  (_server (_method (eql cadenza/sessionUpdate)) &rest params)
  "Record Cadenza's session updates (eglot knows nothing of them)."
  (setq cadenza-test-updates (append cadenza-test-updates (list params))))

(defun cadenza-test-note (key value)
  "Add KEY (a symbol) with VALUE to the findings."
  (push (cons key value) cadenza-test-findings))

(defun cadenza-test-wait-for (what predicate)
  "Spin the event loop until PREDICATE is non-nil; fail naming WHAT after the bound."
  (let ((deadline (+ (float-time) cadenza-test-wait)))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (error "Timed out waiting for %s" what))
      (accept-process-output nil 0.05))))

(defun cadenza-test-open (name &optional text)
  "Visit NAME in the workspace (after writing TEXT to disk when given) and connect eglot."
  (let ((path (expand-file-name name cadenza-test-ws)))
    (when text
      (with-temp-file path (insert text)))
    (find-file path)
    (unless (eglot-current-server)
      (apply #'eglot (eglot--guess-contact)))
    (cadenza-test-wait-for "eglot to connect"
                           (lambda () (eglot-current-server)))
    (current-buffer)))

(defun cadenza-test-start (task)
  "Start a session with TASK through `eglot-execute-command'; return its id."
  (let ((result (eglot-execute-command
                 (eglot-current-server) 'cadenza.startSession
                 (vector (list :task task :model "openai/test")))))
    (plist-get result :sessionId)))

(defun cadenza-test-command (command argument)
  "Run the Cadenza COMMAND (a string) with ARGUMENT (a plist) via `jsonrpc-request'."
  (jsonrpc-request (eglot-current-server) :workspace/executeCommand
                   (list :command command :arguments (vector argument))))

(defun cadenza-test-session-updates (session-id)
  "The update plists of SESSION-ID, oldest first."
  (cl-loop for params in cadenza-test-updates
           when (equal (plist-get params :sessionId) session-id)
           collect (plist-get params :update)))

(defun cadenza-test-wait-end (session-id)
  "Wait for the `session_end' update of SESSION-ID and return its stop reason."
  (let (found)
    (cadenza-test-wait-for
     (format "session %s to end" session-id)
     (lambda ()
       (setq found (cl-find "session_end" (cadenza-test-session-updates session-id)
                            :key (lambda (u) (plist-get u :sessionUpdate))
                            :test #'equal))))
    (plist-get found :stopReason)))

(defun cadenza-test-tool-results (session-id)
  "The text of every finished tool call of SESSION-ID, oldest first."
  (cl-loop for update in (cadenza-test-session-updates session-id)
           when (and (equal (plist-get update :sessionUpdate) "tool_call_update")
                     (member (plist-get update :status) '("completed" "failed")))
           collect (list :status (plist-get update :status)
                         :text (mapconcat
                                (lambda (part)
                                  (or (plist-get (plist-get part :content) :text) ""))
                                (plist-get update :content) ""))))

(defun cadenza-test-run (body)
  "Run BODY (a function); write the findings as JSON and exit 0, or print the error, exit 1."
  (condition-case err
      (progn
        (funcall body)
        (cadenza-test-note 'updates (vconcat (mapcar (lambda (p) (plist-get p :update))
                                                     cadenza-test-updates)))
        (cadenza-test-note 'questions (vconcat cadenza-test-questions))
        (with-temp-file (getenv "CADENZA_TEST_RESULT")
          (insert (json-encode cadenza-test-findings)))
        (when (eglot-current-server)
          (ignore-errors (eglot-shutdown (eglot-current-server))))
        (kill-emacs 0))
    (error
     (princ (format "scenario failed: %S\n" err) #'external-debugging-output)
     (princ (format "updates: %S\n" cadenza-test-updates) #'external-debugging-output)
     (kill-emacs 1))))

(provide 'cadenza-test)
;;; cadenza-test.el ends here
