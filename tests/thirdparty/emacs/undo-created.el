;;; undo-created.el --- cadenza.undoSession after a file created on disk  -*- lexical-binding: t -*-
;; Script (tests/thirdparty/test_eglot.py): create_file new/made.py (on disk: eglot takes no
;; resourceOperations), edit_file a.py "x = 1" -> "x = 2" (the unsaved buffer), a final text.
;; Then cadenza.undoSession: the buffer goes back through workspace/applyEdit, the created
;; file is removed on disk.

(cadenza-test-run
 (lambda ()
   (let* ((buffer (cadenza-test-open "a.py" "x = 1\n"))
          (session (cadenza-test-start "create new/made.py and edit a.py")))
     (cadenza-test-note 'session session)
     (cadenza-test-note 'stop (cadenza-test-wait-end session))
     (cadenza-test-note 'created (if (file-exists-p (expand-file-name "new/made.py" cadenza-test-ws)) t :json-false))
     (with-current-buffer buffer
       (cadenza-test-note 'buffer (buffer-string))
       ;; eglot sends didChange after 0.5 s idle; a person's undo comes later than this
       ;; script's, so send the pending change now (else the server sees the old text).
       (eglot--signal-textDocument/didChange))
     (let ((undone (condition-case err
                       (cadenza-test-command "cadenza.undoSession" (list :sessionId session))
                     (error (list :error (format "%S" err))))))
       (cadenza-test-note 'undo_error (or (plist-get undone :error) :json-false))
       (cadenza-test-note
        'undo_actions
        (vconcat (mapcar (lambda (file) (plist-get file :action)) (plist-get undone :files)))))
     (cadenza-test-note 'exists_after_undo (if (file-exists-p (expand-file-name "new/made.py" cadenza-test-ws)) t :json-false))
     (with-current-buffer buffer (cadenza-test-note 'buffer_after_undo (buffer-string))))))
